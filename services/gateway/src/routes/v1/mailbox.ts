import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClaimMailboxItem, ListMailbox, paginationLinks } from '@ccs/shared';
import { baseUrl, callContext, jsonApiQuery, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/mailbox.js';
import { inventoryChest } from '../../resources/chests.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { type MailboxDocument, mailboxItem } from '../../resources/mailbox.js';

/** Query members of the mailbox list: pages only (its order is fixed: soonest to expire first). */
const MAILBOX_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

/** GET /api/v1/players/me/mailbox: the caller's chests waiting for room in the inventory. */
async function listMailbox(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, MAILBOX_QUERY);
  const r = await request.server.bus.request(ListMailbox, { page: q.page }, callContext(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.items.map(mailboxItem),
    meta: {
      total_count: r.total,
      page: q.page,
      // What a claim needs: a free place in the inventory.
      inventory_status: { capacity: r.capacity, used: r.used, available: Math.max(0, r.capacity - r.used) },
    },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/players/me/mailbox', rest, q.page, r.total),
  } satisfies MailboxDocument);
}

/** POST /api/v1/players/me/mailbox/{id}/claim: the item moves into the inventory; answers the chest. */
async function claimItem(request: FastifyRequest, reply: FastifyReply) {
  const itemId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const chest = await request.server.bus.request(ClaimMailboxItem, { itemId }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, { data: inventoryChest(chest) });
}

/** Routes of the calling player's overflow mailbox (docs/content.md, "Overflow mailbox"). */
export async function mailboxRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me/mailbox', { config: { openapi: documented(docs.listMailbox, { query: MAILBOX_QUERY }) } }, listMailbox);
  // No body needed: an empty one sent with the JSON:API media type is fine too.
  await app.register(async (noBody) => {
    allowEmptyJsonApiBody(noBody);
    noBody.post('/api/v1/players/me/mailbox/:id/claim', { config: { openapi: documented(docs.claimMailboxItem, { query: NO_QUERY }) } }, claimItem);
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { applyFieldset, GetInventory, ListOpenings, paginationLinks, type ParsedQuery } from '@ccs/shared';
import { baseUrl, callContext, jsonApiQuery, playerOf, sendDocument, uuidParam } from '../../lib/http.js';
import { CHEST_FIELDS, inventoryChest, inventoryMeta } from '../../resources/chests.js';
import { chestOpening, type ChestOpeningsDocument } from '../../resources/openings.js';
import { documented } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/chests.js';
import { gatewayErrors } from '../../errors.js';

/** Query members of an inventory: pages of at most 100, by acquisition time, one chest type. */
const INVENTORY_QUERY = {
  fields: { chest: CHEST_FIELDS },
  page: { defaultLimit: 100, maxLimit: 100 },
  sort: ['acquired_at'],
  filter: { fields: ['chest_type_id'] },
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `filter[chest_type_id]=<uuid>`: one chest type (400 for anything else). */
function chestTypeFilter(q: ParsedQuery): string | undefined {
  if (!q.filter) return undefined;
  const f = q.filter;
  if ('field' in f && f.op === 'eq' && typeof f.value === 'string' && UUID.test(f.value)) return f.value.toLowerCase();
  throw gatewayErrors.chestTypeFilter();
}
/** Query members of the opening history. */
const OPENINGS_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

/**
 * The player of the path: a UUID, or `me` for the authenticated player. Any inventory needs a
 * caller: without a token it is 401 (docs/design.md §3), whoever's it is.
 */
function ownerOf(request: FastifyRequest): string {
  const caller = playerOf(request);
  const { id } = request.params as { id?: string };
  return id === 'me' ? caller.id : uuidParam(request, 'id');
}

/**
 * GET /api/v1/players/{id}/chests: the unopened chests of a player with the spec's inventory meta.
 * Another player's inventory follows their privacy (counts only for a public profile). Never cached.
 */
async function getInventory(request: FastifyRequest, reply: FastifyReply) {
  const ownerId = ownerOf(request);
  const q = jsonApiQuery(request, INVENTORY_QUERY);
  const chestTypeId = chestTypeFilter(q);
  const order = q.sort[0]?.direction ?? 'asc';
  const inv = await request.server.bus.request(GetInventory, { ownerId, page: q.page, order, chestTypeId }, callContext(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  // The id as asked (`me` or the UUID ownerOf validated), so the links page the same inventory.
  const path = `/api/v1/players/${(request.params as { id: string }).id}/chests`;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: inv.chests.map((c) => applyFieldset(inventoryChest(c), q.fields)),
    included: [],
    meta: inventoryMeta(inv, q.page),
    ...(inv.view === 'full'
      ? {
          links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), path, rest, q.page, inv.matching ?? inv.totalChests),
        }
      : {}),
  });
}

/** GET /api/v1/players/me/openings: the caller's openings with their results, newest first. */
async function listOpenings(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, OPENINGS_QUERY);
  const r = await request.server.bus.request(ListOpenings, { page: q.page }, callContext(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.openings.map(chestOpening),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/players/me/openings', rest, q.page, r.total),
  } satisfies ChestOpeningsDocument);
}

/** Routes of player inventories and opening history. */
export async function inventoryRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me/openings', { config: { openapi: documented(docs.listOpenings, { query: OPENINGS_QUERY }) } }, listOpenings);
  app.get('/api/v1/players/:id/chests', { config: { openapi: documented(docs.getInventory, { query: INVENTORY_QUERY }) } }, getInventory);
}

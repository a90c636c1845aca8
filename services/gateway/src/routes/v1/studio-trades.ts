import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminCancelTrade, AdminFindPlayer, AdminPlayerTrades, paginationLinks } from '@ccs/shared';
import { baseUrl, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio-trades.js';
import { studioTradeResource, type StudioTradeDocument, type StudioTradeListDocument } from '../../resources/studio-trades.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { linkBase, selfLinks } from './resource-links.js';
import { studioCall } from './studio-call.js';
import { NoteOnlyBody } from './studio-note.js';

/**
 * A player's trades for the studio's support (docs/console.md, "A player's trades"): the list, and
 * support's cancel of an open trade. Registered in the studio scope by studioRoutes: the cancel is
 * recorded in the audit log with its `meta.note`; the read is not.
 */

/** Pages of trades: 20 by default, at most 100. */
const TRADES_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

/** GET /api/v1/admin/players/{id}/trades: a page of the player's trades, newest first. */
async function playerTrades(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, TRADES_QUERY);
  const playerId = uuidParam(request, 'id');
  const appId = request.tenant!.appId;
  const ctx = studioCall(request);
  await request.server.bus.request(AdminFindPlayer, { appId, playerId }, ctx);
  const r = await request.server.bus.request(AdminPlayerTrades, { appId, playerId, page: q.page }, ctx);
  const base = linkBase(request);
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.trades.map((t) => studioTradeResource(t, selfLinks.trade(base, t.id))),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(
      baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL),
      `/api/v1/admin/players/${playerId}/trades`,
      rest,
      q.page,
      r.total,
    ),
  } satisfies StudioTradeListDocument);
}

/** POST /api/v1/admin/trades/{id}/cancel: support ends an open trade; everything goes back to the offerer. */
async function cancelTrade(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const tradeId = uuidParam(request, 'id');
  if (request.body !== undefined) parseBody(NoteOnlyBody, request.body);
  const t = await request.server.bus.request(AdminCancelTrade, { appId: request.tenant!.appId, tradeId }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, { data: studioTradeResource(t, selfLinks.trade(linkBase(request), t.id)) } satisfies StudioTradeDocument);
}

/** Registers the routes in the studio scope (called by studioRoutes, so they share its audit hook). */
export async function studioTradeRoutes(app: FastifyInstance) {
  app.get('/api/v1/admin/players/:id/trades', { config: { openapi: documented(docs.adminPlayerTrades, { query: TRADES_QUERY }) } }, playerTrades);
  // The body is optional: none, an empty one, or `{"meta": {"note": "…"}}` with the JSON:API media type.
  await app.register(async (noteOnlyRoutes) => {
    allowEmptyJsonApiBody(noteOnlyRoutes);
    noteOnlyRoutes.post(
      '/api/v1/admin/trades/:id/cancel',
      { config: { openapi: documented(docs.adminCancelTrade, { query: NO_QUERY, body: { schema: NoteOnlyBody, required: false } }) } },
      cancelTrade,
    );
  });
}

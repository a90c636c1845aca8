import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  ActOnTrade,
  DissolveCollectible,
  GetTrade,
  ListTrades,
  OfferTrade,
  paginationLinks,
  TRADE_STATES,
  type FilterNode,
  type ParsedQuery,
  type TradeState,
} from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, playerOf, sendDocument, uuidParam, writeKeysOf } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/trading.js';
import { gatewayErrors } from '../../errors.js';
import { dissolveDocument, tradeResource, type TradeDocument, type TradeListDocument } from '../../resources/trading.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { linkBase, selfLinks } from './resource-links.js';

export const DissolveBodySchema = z.object({
  data: z.object({
    type: z.literal('dissolve', { error: 'data.type must be "dissolve".' }),
    attributes: z.object({ quantity: z.number().int().min(1).max(1_000_000).describe('Copies to dissolve.') }).strict(),
  }),
});

/**
 * A collectible id as content defines one (a slug: letters, digits and dashes); upper case is let
 * through to be not found (ids are lower case), anything else cannot be one.
 */
const COLLECTIBLE_ID = /^[A-Za-z0-9][A-Za-z0-9-]{0,199}$/;

const CollectibleId = z.string().regex(COLLECTIBLE_ID, { error: 'a collectible id: letters, digits and dashes, at most 200' });

export const OfferBodySchema = z.object({
  data: z.object({
    type: z.literal('trade', { error: 'data.type must be "trade".' }),
    attributes: z
      .object({
        give: CollectibleId.describe('The collectible the caller gives (one copy, held in escrow while the trade is open).'),
        want: CollectibleId.describe('The collectible the caller asks of the partner (one copy).'),
      })
      .strict(),
    relationships: z.object({
      partner: z.object({ data: z.object({ type: z.literal('player', { error: 'the partner is a "player"' }), id: z.uuid() }) }),
    }),
  }),
});

/** Query members of the trade lists: role and state filters, pages. */
const LIST_QUERY = { filter: { fields: ['role', 'state'] }, page: { defaultLimit: 20, maxLimit: 100 } };

/** A collectible id from the path: anything but a slug-shaped id cannot exist (404). */
function collectibleIdOf(request: FastifyRequest): string {
  const id = (request.params as Record<string, string>).collectible_id ?? '';
  if (!COLLECTIBLE_ID.test(id)) throw gatewayErrors.contentNotFound('collectible');
  return id;
}

/** POST /api/v1/players/me/collection/{collectible_id}/dissolve: copies into trade tokens. */
async function dissolve(request: FastifyRequest, reply: FastifyReply) {
  const collectibleId = collectibleIdOf(request);
  jsonApiQuery(request, NO_QUERY);
  const keys = writeKeysOf(request);
  const { quantity } = parseBody(DissolveBodySchema, request.body).data.attributes;
  const r = await request.server.bus.request(DissolveCollectible, { collectibleId, quantity, ...keys }, callContext(request));
  reply.header('cache-control', 'no-store');
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 201, dissolveDocument(r));
}

const tradeDocument = (request: FastifyRequest, t: Parameters<typeof tradeResource>[0]): TradeDocument => ({
  data: tradeResource(t, selfLinks.trade(linkBase(request), t.id)),
});

/** POST /api/v1/trades: an offer. */
async function offer(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const { attributes, relationships } = parseBody(OfferBodySchema, request.body).data;
  const t = await request.server.bus.request(OfferTrade, { partnerId: relationships.partner.data.id, ...attributes }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 201, tradeDocument(request, t));
}

/** POST /api/v1/trades/{id}/accept|decline|cancel. */
const act = (action: 'accept' | 'decline' | 'cancel') => async (request: FastifyRequest, reply: FastifyReply) => {
  const tradeId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const t = await request.server.bus.request(ActOnTrade, { tradeId, action }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, tradeDocument(request, t));
};

/** GET /api/v1/trades/{id}. */
async function getTrade(request: FastifyRequest, reply: FastifyReply) {
  const tradeId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const t = await request.server.bus.request(GetTrade, { tradeId }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, tradeDocument(request, t));
}

const isState = (v: string): v is TradeState => (TRADE_STATES as readonly string[]).includes(v);

/** `filter[role]` and `filter[state]` (several states comma-separated); anything else is a 400. */
function tradeFilters(q: ParsedQuery): { role?: 'incoming' | 'outgoing'; states?: TradeState[] } {
  const nodes: FilterNode[] = !q.filter ? [] : 'and' in q.filter ? q.filter.and : [q.filter];
  const out: { role?: 'incoming' | 'outgoing'; states?: TradeState[] } = {};
  for (const n of nodes) {
    if (!('field' in n) || (n.op !== 'eq' && n.op !== 'in')) throw gatewayErrors.tradeFilter();
    const values = Array.isArray(n.value) ? n.value : n.value.split(',');
    if (n.field === 'role' && values.length === 1 && (values[0] === 'incoming' || values[0] === 'outgoing')) out.role = values[0];
    else if (n.field === 'state' && values.length > 0 && values.every(isState)) out.states = [...new Set(values.filter(isState))];
    else throw gatewayErrors.tradeFilter();
  }
  return out;
}

/** A page of the caller's trades as a list document. */
async function tradePage(request: FastifyRequest, reply: FastifyReply, path: string) {
  const q = jsonApiQuery(request, LIST_QUERY);
  const r = await request.server.bus.request(ListTrades, { ...tradeFilters(q), page: q.page }, callContext(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  const base = linkBase(request);
  return sendDocument(reply, 200, {
    data: r.trades.map((t) => tradeResource(t, selfLinks.trade(base, t.id))),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(base, path, rest, q.page, r.total),
  } satisfies TradeListDocument);
}

/** GET /api/v1/trades. */
const listTrades = (request: FastifyRequest, reply: FastifyReply) => tradePage(request, reply, '/api/v1/trades');

/** GET /api/v1/players/{id}/trades: the caller's own history (`me` or their id); any other player's is a 404. */
async function history(request: FastifyRequest, reply: FastifyReply) {
  const caller = playerOf(request);
  const id = (request.params as Record<string, string>).id ?? '';
  if (id !== 'me' && uuidParam(request, 'id').toLowerCase() !== caller.id.toLowerCase()) throw gatewayErrors.playerNotFound();
  return tradePage(request, reply, `/api/v1/players/${encodeURIComponent(id)}/trades`);
}

/** Trading and dissolving routes of the calling player (docs/content.md, "Trading"). */
export async function tradingRoutes(app: FastifyInstance) {
  app.post(
    '/api/v1/players/me/collection/:collectible_id/dissolve',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.dissolveCollectible, { query: NO_QUERY, body: { schema: DissolveBodySchema, required: true } }),
      },
    },
    dissolve,
  );
  app.post(
    '/api/v1/trades',
    { config: { bodyType: 'jsonapi', openapi: documented(docs.offerTrade, { query: NO_QUERY, body: { schema: OfferBodySchema, required: true } }) } },
    offer,
  );
  app.get('/api/v1/trades', { config: { openapi: documented(docs.listTrades, { query: LIST_QUERY }) } }, listTrades);
  app.get('/api/v1/trades/:id', { config: { openapi: documented(docs.getTrade, { query: NO_QUERY }) } }, getTrade);
  app.get('/api/v1/players/:id/trades', { config: { openapi: documented(docs.playerTradeHistory, { query: LIST_QUERY }) } }, history);
  // No body needed: an empty one sent with the JSON:API media type is fine too.
  await app.register(async (noBody) => {
    allowEmptyJsonApiBody(noBody);
    noBody.post('/api/v1/trades/:id/accept', { config: { openapi: documented(docs.acceptTrade, { query: NO_QUERY }) } }, act('accept'));
    noBody.post('/api/v1/trades/:id/decline', { config: { openapi: documented(docs.declineTrade, { query: NO_QUERY }) } }, act('decline'));
    noBody.post('/api/v1/trades/:id/cancel', { config: { openapi: documented(docs.cancelTrade, { query: NO_QUERY }) } }, act('cancel'));
  });
}

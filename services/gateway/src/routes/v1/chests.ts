import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  AppError,
  applyFieldset,
  ChestSortFieldSchema,
  CHEST_SORT_FIELDS,
  CurrencyCodeSchema,
  FilterNodeSchema,
  GetChestOdds,
  GetChestType,
  ListChestTypes,
  OpenChest,
  paginationLinks,
  PurchaseChests,
  resource,
  type ChestTypeView,
  type InventoryChestView,
  type OpeningView,
  type Resource,
} from '@ccs/shared';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { baseUrl, callContext, idempotencyKeyOf, jsonApiQuery, parseBody, playerOf, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import { contentRead } from '../../plugins/reply-cache.js';
import * as docs from '../../openapi/operations/chests.js';

/** Fields a client may select for a chest (`fields[chest]`). */
export const CHEST_FIELDS = ['id', 'name', 'description', 'images'] as const;

/** A catalog chest: presentation, no relationships, its price per currency code in meta. */
const catalogChest = (c: ChestTypeView): Resource =>
  resource('chest', c.id, { name: c.name, description: c.description, images: c.images }, {}, { price: c.price });

/** An inventory chest: its own id, its type's presentation, where it came from in meta. */
export const inventoryChest = (c: InventoryChestView): Resource =>
  resource('chest', c.id, { name: c.name, description: c.description, images: c.images }, {}, {
    source: c.source,
    chest_type_id: c.chestTypeId,
    acquired_at: c.acquiredAt,
  });

/** The collectibles and statistics of an opening, as the spec's chest-opening result shows them. */
export function openingData(o: OpeningView) {
  const breakdown: Record<string, number> = {};
  for (const it of o.items) breakdown[it.rarity] = (breakdown[it.rarity] ?? 0) + 1;
  return {
    chest_id: o.chestId,
    opened_at: o.openedAt,
    collectibles: o.items.map((it) => ({
      type: 'collectible',
      id: it.collectibleId,
      attributes: { name: it.name, description: it.description, collection_id: it.collectionId, images: it.images, rarity: it.rarity },
    })),
    statistics: { total_items: o.items.length, rarity_breakdown: breakdown },
  };
}

/** Query members of the catalog. */
const CATALOG_QUERY = {
  fields: { chest: CHEST_FIELDS },
  sort: CHEST_SORT_FIELDS,
  filter: { fields: CHEST_SORT_FIELDS, nested: true },
  page: { defaultLimit: 20, maxLimit: 100 },
};
/** Query members of one catalog chest. */
const CHEST_QUERY = { fields: { chest: CHEST_FIELDS } };

/** GET /api/v1/chests: the catalog, filtered, sorted and paginated. */
async function listChests(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, CATALOG_QUERY);
  // The parser bounds depth and width; the contract also bounds list values.
  if (q.filter && !FilterNodeSchema.safeParse(q.filter).success) {
    throw AppError.badRequest('invalid_filter', 'The filter has too many values.', { parameter: 'filter' });
  }
  const sort = q.sort.map((s) => ({ field: ChestSortFieldSchema.parse(s.field), direction: s.direction }));
  const result = await contentRead(request, ListChestTypes, { filter: q.filter, sort, page: q.page });
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  return sendDocument(reply, 200, {
    data: result.chests.map((c) => applyFieldset(catalogChest(c), q.fields)),
    meta: { total_count: result.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/chests', rest, q.page, result.total),
  });
}

/** GET /api/v1/chests/{id}: one catalog chest. */
async function getChest(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  const q = jsonApiQuery(request, CHEST_QUERY);
  const chest = await contentRead(request, GetChestType, { chestTypeId });
  return sendDocument(reply, 200, { data: applyFieldset(catalogChest(chest), q.fields), meta: {} });
}

/** GET /api/v1/chests/{id}/odds: the exact odds of a catalog chest, computed from its rules. */
async function getOdds(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const o = await contentRead(request, GetChestOdds, { chestTypeId });
  return sendDocument(reply, 200, {
    data: resource('chest_odds', o.chestTypeId, {
      items_per_open: { ...o.itemsPerOpen, expected: exact(o.itemsPerOpen.expected) },
      rarities: o.rarities.map((r) => ({ rarity: r.rarity, probability: exact(r.probability), expected_count: exact(r.expectedCount) })),
      collectibles: o.collectibles.map((c) => ({ ...c, probability: exact(c.probability) })),
      rules_version: o.rulesVersion,
    }),
  });
}

/**
 * Drops binary floating-point noise (0.48750000000000004 → 0.4875) from a disclosed figure: 15
 * significant digits are beyond what any rule expresses and keep every sum at 1 within 1e-13.
 */
const exact = (x: number): number => Number(x.toPrecision(15));

/** GET or POST /api/v1/chests/{id}/open: consumes the chest and answers the chest-opening result. */
async function openChest(request: FastifyRequest, reply: FastifyReply) {
  playerOf(request);
  const chestId = uuidParam(request, 'id');
  const idempotencyKey = idempotencyKeyOf(request);
  jsonApiQuery(request, NO_QUERY);
  const o = await request.server.bus.request(OpenChest, { chestId, idempotencyKey }, callContext(request));
  const data = openingData(o);
  const summary = Object.entries(data.statistics.rarity_breakdown).map(([rarity, n]) => `${n} ${rarity}`).join(', ');
  const where = o.granted ? 'added to your collection' : 'on their way to your collection';
  reply.header('cache-control', 'no-store');
  if (o.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 200, {
    data,
    meta: {
      chest_consumed: true,
      experience_gained: o.experience,
      message: `Chest opened: ${o.items.length} collectible${o.items.length === 1 ? '' : 's'} (${summary}) ${where}.`,
      opening_id: o.openingId,
    },
  });
}

const PurchaseBodySchema = z.object({
  data: z.object({
    type: z.literal('purchase', { error: 'data.type must be "purchase".' }),
    attributes: z.object({
      currency: CurrencyCodeSchema.describe('currency code'),
      quantity: z.number().int().min(1).max(10).default(1),
    }),
  }),
});

/** POST /api/v1/chests/{id}/purchase: buys catalog chests into the caller's inventory. */
async function purchase(request: FastifyRequest, reply: FastifyReply) {
  playerOf(request);
  const chestTypeId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const idempotencyKey = idempotencyKeyOf(request);
  const body = parseBody(PurchaseBodySchema, request.body);
  const { currency, quantity } = body.data.attributes;
  const r = await request.server.bus.request(PurchaseChests, { chestTypeId, currency, quantity, idempotencyKey }, callContext(request));
  reply.header('cache-control', 'no-store');
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 201, {
    data: r.chests.map(inventoryChest),
    meta: { purchase_id: r.purchaseId, price_paid: { [currency]: Number(r.amount) }, balance: { [currency]: r.balance } },
  });
}

/** Routes of the chest catalog, odds, opening and purchase. */
export default async function chestsRoutes(app: FastifyInstance) {
  app.get('/api/v1/chests', { config: { openapi: documented(docs.listChests, { query: CATALOG_QUERY }) } }, listChests);
  app.get('/api/v1/chests/:id', { config: { openapi: documented(docs.getChest, { query: CHEST_QUERY }) } }, getChest);
  app.get('/api/v1/chests/:id/odds', { config: { openapi: documented(docs.getChestOdds, { query: NO_QUERY }) } }, getOdds);
  app.get('/api/v1/chests/:id/open', { config: { openapi: documented(docs.openChest, { query: NO_QUERY }) } }, openChest);
  // POST open takes no body: an empty one sent with the JSON:API media type is fine too.
  await app.register(async (noBody) => {
    allowEmptyJsonApiBody(noBody);
    noBody.post('/api/v1/chests/:id/open', { config: { openapi: documented(docs.openChestPost, { query: NO_QUERY }) } }, openChest);
  });
  app.post(
    '/api/v1/chests/:id/purchase',
    { config: { bodyType: 'jsonapi', openapi: documented(docs.purchaseChests, { query: NO_QUERY, body: { schema: PurchaseBodySchema, required: true } }) } },
    purchase,
  );
}

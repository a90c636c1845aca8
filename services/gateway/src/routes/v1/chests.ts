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
  GetPlayerOdds,
  ListChestTypes,
  MAX_BATCH_OPEN,
  OpenChests,
  OpenChest,
  paginationLinks,
  PurchaseChests,
  resource,
  UnlockChest,
  type ChestTypeView,
  type InventoryChestView,
  type OpeningView,
  type Resource,
} from '@ccs/shared';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { baseUrl, callContext, idempotencyKeyOf, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import { contentRead } from '../../plugins/reply-cache.js';
import { conversionsOf, convertedMetaOf } from './conversions-render.js';
import { fairnessOf, pityOf } from './fairness-render.js';
import { purchasableFor, type Purchasable } from './purchasable.js';
import * as docs from '../../openapi/operations/chests.js';

/** Fields a client may select for a chest (`fields[chest]`). */
export const CHEST_FIELDS = ['id', 'name', 'description', 'images'] as const;

/**
 * A catalog chest: presentation, no relationships, its price per currency code in meta, and for a
 * caller with a token where the compliance gate lets them spend (`purchasable`, `requires_key.allowed`,
 * `unlock.skip_allowed`).
 */
const catalogChest = (c: ChestTypeView, purchasable?: Purchasable): Resource =>
  resource(
    'chest',
    c.id,
    { name: c.name, description: c.description, images: c.images },
    {},
    {
      price: c.price,
      ...(c.requiresKey
        ? { requires_key: { ...c.requiresKey, ...(purchasable ? { allowed: purchasable.allowed(c.requiresKey.currency) } : {}) } }
        : {}),
      ...(c.unlock
        ? {
            unlock: {
              seconds: c.unlock.seconds,
              ...(c.unlock.skip ? { skip: { currency: c.unlock.skip.currency, per_minute: c.unlock.skip.perMinute } } : {}),
              ...(purchasable ? { skip_allowed: c.unlock.skip !== undefined && purchasable.allowed(c.unlock.skip.currency) } : {}),
            },
          }
        : {}),
      ...(purchasable ? { purchasable: purchasable(c.price) } : {}),
    },
  );

/** An inventory chest: its own id, its type's presentation, where it came from in meta. */
export const inventoryChest = (c: InventoryChestView): Resource =>
  resource(
    'chest',
    c.id,
    { name: c.name, description: c.description, images: c.images },
    {},
    {
      source: c.source,
      chest_type_id: c.chestTypeId,
      acquired_at: c.acquiredAt,
      ...(c.lock ? { lock: { state: c.lock.state, unlocks_at: c.lock.unlocksAt } } : {}),
    },
  );

/**
 * The collectibles and statistics of an opening, as the spec's chest-opening result shows them;
 * a collectible converted as a duplicate has `meta.converted`.
 */
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
      ...convertedMetaOf(it),
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
  const [result, purchasable] = await Promise.all([
    contentRead(request, ListChestTypes, { filter: q.filter, sort, page: q.page }),
    purchasableFor(request, reply),
  ]);
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  return sendDocument(reply, 200, {
    data: result.chests.map((c) => applyFieldset(catalogChest(c, purchasable), q.fields)),
    meta: { total_count: result.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/chests', rest, q.page, result.total),
  });
}

/** GET /api/v1/chests/{id}: one catalog chest. */
async function getChest(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  const q = jsonApiQuery(request, CHEST_QUERY);
  const [chest, purchasable] = await Promise.all([contentRead(request, GetChestType, { chestTypeId }), purchasableFor(request, reply)]);
  return sendDocument(reply, 200, { data: applyFieldset(catalogChest(chest, purchasable), q.fields), meta: {} });
}

/** Query members of the odds: an earlier content version's rules may be asked for. */
export const ODDS_QUERY = { extra: ['rules_version'] };
const RulesVersionSchema = z.coerce.number().int().min(1).max(2_147_483_647);

const shares = (list: { rarity: string; probability: number; expectedCount: number }[]) =>
  list.map((r) => ({ rarity: r.rarity, probability: exact(r.probability), expected_count: exact(r.expectedCount) }));

/**
 * GET /api/v1/chests/{id}/odds: the exact odds of a catalog chest, computed from its rules, with
 * the rules themselves, pity and duplicates disclosed; with a Bearer token, `meta.player` adds the
 * caller's odds for their next opening (pity applied), read fresh for each caller.
 */
async function getOdds(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  jsonApiQuery(request, ODDS_QUERY);
  const raw = (request.query as Record<string, unknown> | undefined)?.rules_version;
  let rulesVersion: number | undefined;
  if (raw !== undefined) {
    const parsed = RulesVersionSchema.safeParse(raw);
    if (!parsed.success || typeof raw !== 'string') {
      throw AppError.badRequest('invalid_parameter', 'rules_version must be a content version number (1 or more).', { parameter: 'rules_version' });
    }
    rulesVersion = parsed.data;
  }
  const o = await contentRead(request, GetChestOdds, { chestTypeId, rulesVersion });
  const mine =
    request.player && rulesVersion === undefined ? await request.server.bus.request(GetPlayerOdds, { chestTypeId }, callContext(request)) : undefined;
  if (request.player) reply.header('cache-control', 'private, no-store');
  return sendDocument(reply, 200, {
    data: resource('chest_odds', o.chestTypeId, {
      items_per_open: { ...o.itemsPerOpen, expected: exact(o.itemsPerOpen.expected) },
      rarities: shares(o.rarities),
      collectibles: o.collectibles.map((c) => ({ ...c, probability: exact(c.probability) })),
      rules_version: o.rulesVersion,
      rules: o.rules,
      rule_inputs: o.ruleInputs,
      pity: o.pity && {
        rarity: o.pity.rarity,
        hard: o.pity.hard,
        soft_start: o.pity.softStart,
        soft_step: o.pity.softStep,
        group: o.pity.group,
        effective_rarities: shares(o.pity.effectiveRarities),
      },
      duplicates: o.duplicates,
    }),
    ...(mine
      ? { meta: { player: { opens_since_pity: mine.opensSincePity, guaranteed_within: mine.guaranteedWithin, rarities: shares(mine.rarities) } } }
      : {}),
  });
}

/**
 * Drops binary floating-point noise (0.48750000000000004 → 0.4875) from a disclosed figure: 15
 * significant digits are beyond what any rule expresses and keep every sum at 1 within 1e-13.
 */
const exact = (x: number): number => Number(x.toPrecision(15));

/** GET or POST /api/v1/chests/{id}/open: consumes the chest and answers the chest-opening result. */
async function openChest(request: FastifyRequest, reply: FastifyReply) {
  const chestId = uuidParam(request, 'id');
  const idempotencyKey = idempotencyKeyOf(request);
  jsonApiQuery(request, NO_QUERY);
  const o = await request.server.bus.request(OpenChest, { chestId, idempotencyKey }, callContext(request));
  const data = openingData(o);
  // Known once collections confirmed the grant; omitted (not known) otherwise.
  const conversions = conversionsOf(o);
  const summary = Object.entries(data.statistics.rarity_breakdown)
    .map(([rarity, n]) => `${n} ${rarity}`)
    .join(', ');
  const converted = o.items.filter((it) => it.converted).length;
  const where = o.granted ? 'added to your collection' : 'on their way to your collection';
  const duplicates =
    converted && conversions
      ? `; ${converted} of them ${converted === 1 ? 'was a duplicate' : 'were duplicates'}, converted into ${Object.entries(conversions)
          .map(([c, n]) => `${n} ${c}`)
          .join(', ')}`
      : '';
  reply.header('cache-control', 'no-store');
  if (o.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 200, {
    data,
    meta: {
      chest_consumed: true,
      experience_gained: o.experience,
      message: `Chest opened: ${o.items.length} collectible${o.items.length === 1 ? '' : 's'} (${summary}) ${where}${duplicates}.`,
      opening_id: o.openingId,
      pity: pityOf(o),
      fairness: fairnessOf(o),
      ...(conversions ? { conversions } : {}),
    },
  });
}

/** POST /chests/open: the chests to open, in order, as resource identifiers. */
export const OpenChestsBodySchema = z.object({
  data: z
    .array(
      z.object({
        type: z.literal('chest', { error: 'type must be "chest".' }),
        id: z.string().uuid({ error: 'id must be the UUID of an inventory chest.' }),
      }),
    )
    .min(1, { error: 'Name at least one chest.' })
    .max(MAX_BATCH_OPEN, { error: `At most ${MAX_BATCH_OPEN} chests per request.` }),
});

/**
 * POST /api/v1/chests/open: opens up to 50 of the caller's chests at once, in order, all or
 * nothing. `data` holds one chest-opening result per chest (its `data` members plus its `meta`);
 * the document's meta sums them up.
 */
async function openMany(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const idempotencyKey = idempotencyKeyOf(request);
  const chestIds = parseBody(OpenChestsBodySchema, request.body).data.map((d) => d.id);
  const r = await request.server.bus.request(OpenChests, { chestIds, idempotencyKey }, callContext(request));
  const items = r.openings.reduce((n, o) => n + o.items.length, 0);
  reply.header('cache-control', 'no-store');
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 200, {
    data: r.openings.map((o) => ({
      ...openingData(o),
      meta: {
        chest_consumed: true,
        experience_gained: o.experience,
        opening_id: o.openingId,
        pity: pityOf(o),
        fairness: fairnessOf(o),
        // As for one opening: known once collections confirmed that opening's grant.
        ...(conversionsOf(o) ? { conversions: conversionsOf(o) } : {}),
      },
    })),
    meta: {
      chests_consumed: r.openings.length,
      experience_gained: r.openings.reduce((n, o) => n + o.experience, 0),
      message: `${r.openings.length} chest${r.openings.length === 1 ? '' : 's'} opened: ${items} collectibles ${r.granted ? 'added to your collection' : 'on their way to your collection'}.`,
    },
  });
}

/** POST /chests/{id}/unlock: no body starts the timer; `skip_with` pays to skip it. */
const UnlockBodySchema = z.object({
  data: z.object({
    type: z.literal('unlock', { error: 'data.type must be "unlock".' }),
    attributes: z.object({ skip_with: CurrencyCodeSchema.describe('the currency to skip the timer with') }).strict(),
  }),
});

/** POST /api/v1/chests/{id}/unlock: starts a time-locked chest's timer, or skips it for currency. */
async function unlock(request: FastifyRequest, reply: FastifyReply) {
  const chestId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const skipWith = request.body === undefined ? undefined : parseBody(UnlockBodySchema, request.body).data.attributes.skip_with;
  const r = await request.server.bus.request(UnlockChest, { chestId, skipWith }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: inventoryChest(r.chest),
    meta: r.charged ? { price_paid: { [r.charged.currency]: r.charged.amount }, balance: { [r.charged.currency]: r.charged.balance } } : {},
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

/** The chest catalog and its odds (app scope: a Bearer token adds the caller's own figures). */
export async function catalogRoutes(app: FastifyInstance) {
  app.get('/api/v1/chests', { config: { openapi: documented(docs.listChests, { query: CATALOG_QUERY }) } }, listChests);
  app.get('/api/v1/chests/:id', { config: { openapi: documented(docs.getChest, { query: CHEST_QUERY }) } }, getChest);
  app.get('/api/v1/chests/:id/odds', { config: { openapi: documented(docs.getChestOdds, { query: ODDS_QUERY }) } }, getOdds);
}

/** Opening, unlocking and buying chests (player scope). */
export async function chestActionRoutes(app: FastifyInstance) {
  app.get('/api/v1/chests/:id/open', { config: { openapi: documented(docs.openChest, { query: NO_QUERY }) } }, openChest);
  // POST open takes no body: an empty one sent with the JSON:API media type is fine too.
  await app.register(async (noBody) => {
    allowEmptyJsonApiBody(noBody);
    noBody.post('/api/v1/chests/:id/open', { config: { openapi: documented(docs.openChestPost, { query: NO_QUERY }) } }, openChest);
    // Unlock: no body (or an empty one) starts the timer; a body skips it.
    noBody.post(
      '/api/v1/chests/:id/unlock',
      { config: { openapi: documented(docs.unlockChest, { query: NO_QUERY, body: { schema: UnlockBodySchema, required: false } }) } },
      unlock,
    );
  });
  app.post(
    '/api/v1/chests/open',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.openChests, { query: NO_QUERY, body: { schema: OpenChestsBodySchema, required: true } }),
      },
    },
    openMany,
  );
  app.post(
    '/api/v1/chests/:id/purchase',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.purchaseChests, { query: NO_QUERY, body: { schema: PurchaseBodySchema, required: true } }),
      },
    },
    purchase,
  );
}

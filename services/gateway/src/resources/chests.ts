import { z } from 'zod';
import {
  ChestSourceSchema,
  DecimalSchema,
  UuidSchema,
  type ChestTypeView,
  type InventoryChestView,
  type ReplyOf,
  UnlockChest,
  PurchaseChests,
  GetInventory,
} from '@ccs/shared';
import { component } from '../openapi/components.js';
import type { Purchasable } from '../routes/v1/purchasable.js';
import { selfLinks } from '../routes/v1/resource-links.js';
import { Count, fieldsOf, NoRelationships, PageMeta, PaginationLinks, ResourceLinks, sparse, Timestamp } from './jsonapi.js';

/**
 * The chest resource (type `chest`): a catalog chest (a chest type) and an inventory chest (one a
 * player owns) share its attributes. Their response schemas, the documents that hold them, and the
 * functions that render them, typed by those schemas.
 */

const ChestAttributes = z.object({
  name: z.string(),
  description: z.string(),
  images: z.array(z.string()).describe('Image URLs.'),
});

/** Fields a client may select for a chest (`fields[chest]`): its id and every attribute. */
export const CHEST_FIELDS = ['id', ...fieldsOf(ChestAttributes)];

/** Amounts per currency code, as integers. */
const PerCurrency = z.record(z.string(), z.number().int());

/** An announced odds change not yet in force (docs/design.md §7, odds change notice periods). */
export const OddsChange = z
  .object({
    effective_at: Timestamp.describe('When the new rules take effect (the odds log entry of the change says the same).'),
    rules_version: z
      .number()
      .int()
      .min(1)
      .describe('The content version of the coming rules (`GET /chests/{id}/odds?rules_version=` discloses them).'),
  })
  .describe(
    "A change of the chest's rules announced under the app's odds change notice period (content `compliance.odds_change_notice_hours`): until `effective_at` openings roll the rules in force; absent when none is pending.",
  );

/** A chest of the catalog (a chest type), as rendered: every attribute. */
const RenderedCatalogChest = z.object({
  type: z.literal('chest'),
  id: UuidSchema,
  attributes: ChestAttributes,
  relationships: NoRelationships,
  links: ResourceLinks.describe('`self`: `/api/v1/chests/{id}`.'),
  meta: z.object({
    requires_key: z
      .object({
        currency: z.string(),
        amount: z.number().int(),
        allowed: z
          .boolean()
          .optional()
          .describe(
            'With a Bearer token only: whether the compliance rules let the caller open it with its key (false for a paid key currency from a blocked region or under the minimum age).',
          ),
      })
      .optional()
      .describe('The key this chest needs to open: `amount` of that currency, debited when it opens (docs/content.md, "Key-required chests").'),
    unlock: z
      .object({
        seconds: z.number().int().min(1),
        skip: z.object({ currency: z.string(), per_minute: z.number().positive() }).optional(),
        skip_allowed: z
          .boolean()
          .optional()
          .describe(
            'With a Bearer token only: whether the caller may skip the timer for currency (false when it has no skip, or the compliance rules refuse its paid skip currency to the caller).',
          ),
      })
      .optional()
      .describe(
        'A timer this chest must run before it opens: `seconds` once started (POST /chests/{id}/unlock), or at once by paying `ceil(remaining minutes × per_minute)` of `skip.currency` (docs/content.md, "Time-locked chests").',
      ),
    price: PerCurrency.describe('Price per currency code, e.g. `{"coins": 500, "gems": 5}`.'),
    purchasable: z
      .record(z.string(), z.boolean())
      .optional()
      .describe(
        'With a Bearer token only: per price currency, whether the compliance rules let the caller buy with it, e.g. `{"coins": true, "gems": false}` (not whether the balance suffices). ' +
          'Absent without a token, and when it cannot be determined right now.',
      ),
    odds_change: OddsChange.optional(),
  }),
});

/** A chest of the catalog (a chest type), as documented: `fields[chest]` may leave attributes out. */
export const CatalogChest = component(
  'CatalogChest',
  'A chest of the catalog. `meta.price` holds its price per currency code; a currency it cannot be bought with is absent. ' +
    "With a Bearer token, `meta.purchasable` says per price currency whether the caller may buy it with that currency (the app's compliance rules: region and age), " +
    'and `meta.requires_key.allowed` and `meta.unlock.skip_allowed` whether the caller may open it with its key and skip its timer.',
  RenderedCatalogChest.extend({ attributes: sparse('chest', ChestAttributes) }),
);

/** The timer of a time-locked inventory chest. */
const ChestLock = z.object({
  state: z
    .enum(['locked', 'unlocking', 'unlocked'])
    .describe('`locked`: the timer has not started; `unlocking`: it runs; `unlocked`: it can be opened.'),
  unlocks_at: Timestamp.nullable().describe('When the timer ends (or ended); null while `locked`.'),
});

/** An unopened chest a player owns, as rendered: its own id (the one `/open` takes) and its type's presentation. */
const RenderedInventoryChest = z.object({
  type: z.literal('chest'),
  id: UuidSchema,
  attributes: ChestAttributes,
  relationships: NoRelationships,
  meta: z.object({
    source: ChestSourceSchema,
    chest_type_id: UuidSchema,
    acquired_at: Timestamp,
    lock: ChestLock.optional().describe('Only for a time-locked chest: where its timer stands.'),
  }),
});

/** An unopened chest a player owns, as documented: `fields[chest]` may leave attributes out. */
export const InventoryChest = component(
  'InventoryChest',
  'An unopened chest a player owns. Its `id` is this chest (the one `/chests/{id}/open` takes); `meta.chest_type_id` is its catalog chest.',
  RenderedInventoryChest.extend({ attributes: sparse('chest', ChestAttributes) }),
);

/** The unlock call's answer: the chest with its timer, and what a skip cost. */
export const UnlockDocument = component(
  'UnlockDocument',
  'The chest after the unlock: `meta.lock` says whether its timer runs (`unlocking`) or it is `unlocked`. A skip that charged shows `meta.price_paid` and `meta.balance`.',
  z.object({
    data: InventoryChest,
    meta: z.object({
      price_paid: PerCurrency.optional().describe('What this call charged to skip the timer, e.g. `{"gems": 60}`; absent when nothing was charged.'),
      balance: z.record(z.string(), DecimalSchema).optional().describe('The balance of that currency after the skip.'),
    }),
  }),
);

/** The catalog: filtered, sorted, paginated. */
export const ChestCatalogDocument = component(
  'ChestCatalogDocument',
  'A page of the chest catalog.',
  z.object({
    data: z.array(CatalogChest),
    meta: z.object({ total_count: Count.describe('Chests matching the filter.'), page: PageMeta }),
    links: PaginationLinks,
  }),
);

/** One catalog chest. */
export const ChestDocument = component('ChestDocument', 'One catalog chest; `meta` is empty.', z.object({ data: CatalogChest, meta: z.object({}) }));

/** Chests bought: the new inventory chests. */
export const PurchaseDocument = component(
  'PurchaseDocument',
  'The chests bought, now in the inventory; what was paid and the balance left.',
  z.object({
    data: z.array(InventoryChest),
    meta: z.object({
      purchase_id: UuidSchema,
      price_paid: z.record(z.string(), z.number()).describe('Amount paid, by currency code.'),
      balance: z.record(z.string(), DecimalSchema).describe('Balance left, by currency code, as a decimal string.'),
    }),
  }),
);

/** A player's unopened chests with the spec's inventory meta. */
export const InventoryDocument = component(
  'InventoryDocument',
  "A player's unopened chests. For another player's public profile `data` is empty and `meta` holds the counts only (no `estimated_value`, no `inventory_status`).",
  z.object({
    data: z.array(InventoryChest),
    included: z.array(z.never()).max(0).describe('Always empty.'),
    meta: z.object({
      player_id: UuidSchema,
      total_chests: Count,
      chest_types: z
        .object({ purchased: Count, earned: Count, welcome: Count, special: Count })
        .describe('Unopened chests by how they were obtained.'),
      estimated_value: z
        .record(z.string(), z.number().int())
        .optional()
        .describe(
          "Sum of the unopened chests' catalog prices, by currency code: every currency of the app's content (e.g. `coins`, `gems`, `vault_key` in the demo app), 0 where no chest held is priced in it, and no other.",
        ),
      inventory_status: z.object({ capacity: Count, used: Count, available: Count }).optional(),
      page: z
        .object({ limit: Count, offset: Count, total: Count.describe('Chests matching the filter (the whole inventory without one).') })
        .optional()
        .describe("The page shown (own or a friend's inventory); the other meta always counts the whole inventory."),
    }),
    links: PaginationLinks.optional().describe("Pages of the inventory (own or a friend's)."),
  }),
);

/**
 * A catalog chest: presentation, no relationships, its price per currency code in meta, and for a
 * caller with a token where the compliance gate lets them spend (`purchasable`, `requires_key.allowed`,
 * `unlock.skip_allowed`); `base` is the links' absolute base.
 */
export const catalogChest = (c: ChestTypeView, base: string, purchasable?: Purchasable): z.output<typeof RenderedCatalogChest> => ({
  type: 'chest',
  id: c.id,
  attributes: { name: c.name, description: c.description, images: c.images },
  relationships: {},
  links: selfLinks.chest(base, c.id),
  meta: {
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
    ...(c.oddsChange ? { odds_change: { effective_at: c.oddsChange.effectiveAt, rules_version: c.oddsChange.rulesVersion } } : {}),
  },
});

/**
 * An inventory chest: its own id, its type's presentation, where it came from in meta. No self
 * link: no GET serves one owned chest (its id is the one `/chests/{id}/open` and `/unlock` take).
 */
export const inventoryChest = (c: InventoryChestView): z.output<typeof RenderedInventoryChest> => ({
  type: 'chest',
  id: c.id,
  attributes: { name: c.name, description: c.description, images: c.images },
  relationships: {},
  meta: {
    source: c.source,
    chest_type_id: c.chestTypeId,
    acquired_at: c.acquiredAt,
    ...(c.lock ? { lock: { state: c.lock.state, unlocks_at: c.lock.unlocksAt } } : {}),
  },
});

/** What `CatalogChest` describes, as the gateway renders it. */
export type CatalogChest = z.output<typeof CatalogChest>;
/** What `InventoryChest` describes, as the gateway renders it. */
export type InventoryChest = z.output<typeof InventoryChest>;
/** What `PurchaseDocument` describes, as the gateway renders it. */
export type PurchaseDocument = z.output<typeof PurchaseDocument>;
/** What `UnlockDocument` describes, as the gateway renders it. */
export type UnlockDocument = z.output<typeof UnlockDocument>;

/** The unlock's answer: the chest with its timer, and what a skip charged. */
export function unlockDocument(r: ReplyOf<typeof UnlockChest>): z.output<typeof UnlockDocument> {
  return {
    data: inventoryChest(r.chest),
    meta: r.charged ? { price_paid: { [r.charged.currency]: r.charged.amount }, balance: { [r.charged.currency]: r.charged.balance } } : {},
  };
}

/** Chests bought: the new inventory chests, what was paid and the balance left. */
export function purchaseDocument(r: ReplyOf<typeof PurchaseChests>, currency: string): z.output<typeof PurchaseDocument> {
  return {
    data: r.chests.map(inventoryChest),
    meta: { purchase_id: r.purchaseId, price_paid: { [currency]: Number(r.amount) }, balance: { [currency]: r.balance } },
  };
}

/**
 * An inventory's meta: the counts always; for a full view (the owner's, or a friend's as their
 * privacy allows) its value in every currency of the app's content (0 where no chest is priced in
 * it), its room and the page shown.
 */
export function inventoryMeta(
  inv: ReplyOf<typeof GetInventory>,
  page: { limit: number; offset: number },
): z.output<typeof InventoryDocument>['meta'] {
  const counts = {
    player_id: inv.playerId,
    total_chests: inv.totalChests,
    chest_types: { purchased: inv.bySource.purchased, earned: inv.bySource.earned, welcome: inv.bySource.welcome, special: inv.bySource.special },
  };
  if (inv.view !== 'full') return counts;
  const capacity = inv.capacity ?? 0;
  return {
    ...counts,
    estimated_value: inv.estimatedValue ?? {},
    inventory_status: { capacity, used: inv.totalChests, available: Math.max(0, capacity - inv.totalChests) },
    page: { ...page, total: inv.matching ?? inv.totalChests },
  };
}

import { z } from 'zod';
import { ChestDisclosureSchema } from './fairness.js';
import { defineQuery, defineSubject, RetryKeySchema } from './subject.js';
import { DecimalSchema, UuidSchema } from './context.js';
import { CurrencyCodeSchema } from './wallet.js';
import { FilterNodeSchema } from '../jsonapi/filter.js';

/** A chest type of the catalog as the chests service shows it. */
export const ChestTypeViewSchema = z.object({
  /** Stable UUID per (app, slug). */
  id: UuidSchema,
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  images: z.array(z.string()),
  /** Price per currency code (integers); a currency it cannot be bought with is absent. */
  price: z.record(z.string(), z.number().int()),
  /** The key it needs to open (docs/content.md, "Key-required chests"); absent: none. */
  requiresKey: z.object({ currency: z.string(), amount: z.number().int() }).optional(),
  /** Its timer (docs/content.md, "Time-locked chests"); absent: opens at once. */
  unlock: z.object({ seconds: z.number().int(), skip: z.object({ currency: z.string(), perMinute: z.number() }).optional() }).optional(),
  /**
   * A change of its rules announced and not yet in force (docs/design.md §7, odds change notice
   * periods): when the new rules take effect and their rules version; absent: none pending.
   */
  oddsChange: z.object({ effectiveAt: z.string(), rulesVersion: z.number().int() }).optional(),
});
export type ChestTypeView = z.infer<typeof ChestTypeViewSchema>;

const PageSchema = z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) });
/** Fields the catalog can be sorted and filtered by. */
export const CHEST_SORT_FIELDS = ['id', 'name', 'description'] as const;
/** One catalog sort field. */
export const ChestSortFieldSchema = z.enum(CHEST_SORT_FIELDS);
const SortSchema = z.array(z.object({ field: ChestSortFieldSchema, direction: z.enum(['asc', 'desc']) }));

/** The catalog of ctx.appId: filtered, sorted and paginated. */
export const ListChestTypes = defineQuery(
  'chests.v1.list_chest_types',
  z.object({ filter: FilterNodeSchema.optional(), sort: SortSchema.default([]), page: PageSchema }),
  z.object({ chests: z.array(ChestTypeViewSchema), total: z.number().int().min(0) }),
  { callers: ['gateway', 'admin'] },
);

/** One catalog chest type (404 chest_not_found when unknown in ctx.appId). */
export const GetChestType = defineQuery('chests.v1.get_chest_type', z.object({ chestTypeId: UuidSchema }), ChestTypeViewSchema, {
  callers: ['gateway'],
});

/**
 * The exact odds of one chest type, from the rules the roll uses: those of the current content
 * version, or of `rulesVersion` (a version the type existed in; 404 rules_version_not_found else).
 */
export const GetChestOdds = defineQuery(
  'chests.v1.get_odds',
  z.object({ chestTypeId: UuidSchema, rulesVersion: z.number().int().min(1).optional() }),
  ChestDisclosureSchema.extend({
    chestTypeId: UuidSchema,
    /** Content version the rules come from. */
    rulesVersion: z.number().int().min(1),
    itemsPerOpen: z.object({ min: z.number().int(), max: z.number().int(), expected: z.number() }),
    rarities: z.array(z.object({ rarity: z.string(), probability: z.number(), expectedCount: z.number() })),
    collectibles: z.array(z.object({ id: z.string(), rarity: z.string(), probability: z.number() })),
    /** For the rules in force (no `rulesVersion` asked): a change announced and not yet in force. */
    oddsChange: ChestTypeViewSchema.shape.oddsChange,
  }),
  { callers: ['gateway'] },
);

/** Where an inventory chest came from (the spec's chest_types counters). */
export const ChestSourceSchema = z.enum(['purchased', 'earned', 'welcome', 'special']);

/**
 * The timer of a time-locked inventory chest: `locked` (not started; `unlocksAt` null),
 * `unlocking` (running until `unlocksAt`) or `unlocked` (since `unlocksAt`).
 */
export const ChestLockSchema = z.object({ state: z.enum(['locked', 'unlocking', 'unlocked']), unlocksAt: z.string().nullable() });
export type ChestLock = z.infer<typeof ChestLockSchema>;

/** One unopened chest of an inventory, with its type's presentation. */
export const InventoryChestViewSchema = z.object({
  id: UuidSchema,
  chestTypeId: UuidSchema,
  name: z.string(),
  description: z.string(),
  images: z.array(z.string()),
  source: ChestSourceSchema,
  /** ISO 8601 UTC. */
  acquiredAt: z.string(),
  /** Where its timer stands, when its type is time-locked (absent otherwise). */
  lock: ChestLockSchema.optional(),
});
export type InventoryChestView = z.infer<typeof InventoryChestViewSchema>;

/**
 * A player's unopened chests as ctx.playerId may see them: `full` (own, or a confirmed friend),
 * or `counts` (public profile: counts per source only, no chests). Denied → 403 with the reason.
 */
export const GetInventory = defineQuery(
  'chests.v1.inventory',
  z.object({
    ownerId: UuidSchema,
    /** The page of chests to list (default: the first 100); the counts always cover the whole inventory. */
    page: PageSchema.default({ limit: 100, offset: 0 }),
    /** Order by acquisition time (then id): oldest first by default. */
    order: z.enum(['asc', 'desc']).default('asc'),
    /** Only chests of this chest type in `chests` (and in `matching`). */
    chestTypeId: UuidSchema.optional(),
  }),
  z.object({
    view: z.enum(['full', 'counts']),
    playerId: UuidSchema,
    /** One page of the unopened chests (empty in the counts view). */
    chests: z.array(InventoryChestViewSchema),
    /** Chests matching the filter (for page links); `totalChests` when there is none. */
    matching: z.number().int().min(0).optional(),
    totalChests: z.number().int().min(0),
    bySource: z.record(ChestSourceSchema, z.number().int().min(0)),
    /** Sum of the chests' prices per currency code, every currency of the app's content (0 where none), full view only. */
    estimatedValue: z.record(z.string(), z.number().int()).optional(),
    capacity: z.number().int().min(0).optional(),
  }),
  { callers: ['gateway'] },
);

/** One item of an opening with the collectible's presentation at the time of opening. */
export const OpenedItemSchema = z.object({
  slot: z.number().int().min(0),
  collectibleId: z.string(),
  collectionId: z.string(),
  name: z.string(),
  description: z.string(),
  images: z.array(z.string()),
  rarity: z.string(),
  /** Set when the player already held `duplicates.max_copies` of it: what it was converted into instead. */
  converted: z.object({ currency: z.string(), amount: z.number().int().min(0) }).optional(),
});

/** The pity state an opening was made with, and what it did (absent: the chest has no pity). */
export const OpeningPitySchema = z.object({
  /** The pity group (a chest type's own id unless its rules name a group). */
  group: z.string(),
  rarity: z.string(),
  opensSinceBefore: z.number().int().min(0),
  opensSinceAfter: z.number().int().min(0),
  /** Whether the hard pity guarantee shaped this opening. */
  triggered: z.boolean(),
});

/** The commit-reveal inputs of an opening's random stream (docs/fairness.md). */
export const OpeningFairnessSchema = z.object({
  serverSeedHash: z.string(),
  clientSeed: z.string(),
  nonce: z.number().int().min(0),
});

/** What a banner opening recorded (docs/design.md §8, `meta.banner`); absent on other openings. */
export const OpeningBannerSchema = z.object({
  /** The banner's id (its slug). */
  bannerId: z.string(),
  /** Whether the opening gave one of the featured collectibles. */
  featured: z.boolean(),
  /** Whether the guarantee held before the opening (its next item of the featured rarity was certain to be featured). */
  guaranteedBefore: z.boolean(),
  /** The player's spark points on the banner after the opening. */
  sparkPointsAfter: z.number().int().min(0),
  /** Whether the ten-pull floor re-rolled this opening's last item. */
  floorRerolled: z.boolean(),
  /** The banner's rules version the pull rolled (its odds log entry's); absent on openings recorded before banners were logged. */
  rulesVersion: z.number().int().min(1).optional(),
});

/** The stored result of one chest opening. */
export const OpeningViewSchema = z.object({
  openingId: UuidSchema,
  chestId: UuidSchema,
  chestTypeId: UuidSchema,
  /** ISO 8601 UTC. */
  openedAt: z.string(),
  items: z.array(OpenedItemSchema),
  experience: z.number().int().min(0),
  rulesVersion: z.number().int().min(1),
  pity: OpeningPitySchema.optional(),
  /** Absent on openings made before fairness existed. */
  fairness: OpeningFairnessSchema.optional(),
  /** A banner pull's opening: what it recorded of the banner. */
  banner: OpeningBannerSchema.optional(),
  /** Totals per currency of the items converted as duplicates (known once collections applied the grant). */
  conversions: z.array(z.object({ currency: z.string(), amount: z.number().int().min(0) })).optional(),
});
export type OpeningView = z.infer<typeof OpeningViewSchema>;

/**
 * Opens ctx.playerId's chest: 404 chest_not_found, 403 chest_not_owned / chest_already_opened.
 * The same `idempotencyKey` (per app and player) returns the first result again (`replayed`).
 */
export const OpenChest = defineSubject(
  'chests.v1.open',
  z.object({ chestId: UuidSchema, idempotencyKey: z.string().min(1).max(255).optional(), retryKey: RetryKeySchema.optional() }),
  OpeningViewSchema.extend({
    replayed: z.boolean(),
    /** Whether collections confirmed the grant before the answer (else it lands shortly). */
    granted: z.boolean(),
  }),
  { callers: ['gateway'], keyedRetry: true },
);

/** ctx.playerId's openings, newest first. */
export const ListOpenings = defineQuery(
  'chests.v1.list_openings',
  z.object({ page: PageSchema }),
  z.object({ openings: z.array(OpeningViewSchema), total: z.number().int().min(0) }),
  { callers: ['gateway'] },
);

/**
 * Buys `quantity` chests of a catalog type for ctx.playerId with one currency: capacity checked
 * (409 inventory_full), the wallet debited (409 insufficient_funds), the chests added; the debit is
 * refunded when they cannot be added.
 */
export const PurchaseChests = defineSubject(
  'chests.v1.purchase',
  z.object({
    chestTypeId: UuidSchema,
    currency: CurrencyCodeSchema,
    quantity: z.number().int().min(1).max(10),
    /** The client's Idempotency-Key: the same key and request answer the first purchase again. */
    idempotencyKey: z.string().min(1).max(255).optional(),
  }),
  z.object({
    purchaseId: UuidSchema,
    chests: z.array(InventoryChestViewSchema),
    amount: DecimalSchema,
    /** The balance of that currency after the debit. */
    balance: DecimalSchema,
    /** An answer given before to the same Idempotency-Key. */
    replayed: z.boolean().default(false),
  }),
  { callers: ['gateway'] },
);

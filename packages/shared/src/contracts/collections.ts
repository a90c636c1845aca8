import { z } from 'zod';
import { defineQuery } from './subject.js';
import { UuidSchema } from './context.js';
import { FilterNodeSchema } from '../jsonapi/filter.js';

/**
 * Contracts of the collections service. Replies carry domain views; the gateway renders them as
 * JSON:API. Every request is scoped by ctx.appId; the player-specific parts use ctx.playerId
 * (absent for anonymous requests) and are never cached.
 */

/**
 * Ids of collections and collectibles: slugs, but any string may be asked for (unknown → 404).
 * Slugs are lower case (content.ts), so a lookup compares case-insensitively, as every id does.
 */
const ContentIdSchema = z
  .string()
  .min(1)
  .max(200)
  .overwrite((id) => id.toLowerCase());

/** A collectible of the app's current content. */
export const CollectibleViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  collectionId: z.string(),
  images: z.array(z.string()),
  rarity: z.string(),
});
export type CollectibleView = z.infer<typeof CollectibleViewSchema>;

/** A collection of the app's current content, with the ids of its collectibles in content order. */
export const CollectionViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  collectibleIds: z.array(z.string()),
  /** What completing it gives, once (docs/content.md, "Collection rewards"); absent: nothing. */
  completionReward: z.object({ currencies: z.record(z.string(), z.number().int()).optional(), chests: z.array(z.string()).optional() }).optional(),
});
export type CollectionView = z.infer<typeof CollectionViewSchema>;

/** A page of a list: `page[limit]` and `page[offset]`. */
export const PageRequestSchema = z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) });

/** Sort keys of the collection lists. */
export const COLLECTION_SORT_FIELDS = ['id', 'name'] as const;
/** Sort keys of the collectible lists (`rarity` orders by the rarity's rank). */
export const COLLECTIBLE_SORT_FIELDS = ['id', 'name', 'collection_id', 'rarity'] as const;
/** Filterable fields of the collectible list. */
export const COLLECTIBLE_FILTER_FIELDS = ['collection_id', 'rarity'] as const;

const sortOf = <F extends readonly [string, ...string[]]>(fields: F) =>
  z.array(z.object({ field: z.enum(fields), direction: z.enum(['asc', 'desc']) })).max(5);

/** How much of a collection a player owns: distinct items owned out of the collection's size. */
export const CompletenessSchema = z.object({
  totalItems: z.number().int().min(0),
  uniqueItems: z.number().int().min(0),
  /** uniqueItems / totalItems to four decimal places, rounded down; 0 for anonymous requests. */
  completionRate: z.number().min(0).max(1),
  /** ISO 8601 UTC: when the player first owned every collectible of it; absent until then. */
  completedAt: z.string().optional(),
});
export type Completeness = z.infer<typeof CompletenessSchema>;

/** Lists the app's collections, paginated. */
export const ListCollections = defineQuery(
  'collections.v1.list_collections',
  z.object({ page: PageRequestSchema, sort: sortOf(COLLECTION_SORT_FIELDS) }),
  z.object({
    total: z.number().int().min(0),
    collections: z.array(CollectionViewSchema),
    /** With a caller: when they completed each collection they completed (id → ISO 8601 UTC); never cached. */
    completedAt: z.record(z.string(), z.string()).optional(),
  }),
  { callers: ['gateway'] },
);

/** One collection (404 collection_not_found), its collectibles when asked, and the caller's completeness. */
export const GetCollection = defineQuery(
  'collections.v1.get_collection',
  z.object({ collectionId: ContentIdSchema, includeCollectibles: z.boolean() }),
  z.object({
    collection: CollectionViewSchema,
    collectibles: z.array(CollectibleViewSchema).optional(),
    completeness: CompletenessSchema,
  }),
  { callers: ['gateway'] },
);

/** The collectibles of one collection (404 collection_not_found), with the caller's completion. */
export const ListCollectionCollectibles = defineQuery(
  'collections.v1.list_collection_collectibles',
  z.object({ collectionId: ContentIdSchema, sort: sortOf(COLLECTIBLE_SORT_FIELDS) }),
  z.object({ collection: CollectionViewSchema, collectibles: z.array(CollectibleViewSchema), completeness: CompletenessSchema }),
  { callers: ['gateway'] },
);

/** Lists the app's collectibles: filter on collection_id and rarity (and/or/not allowed), paginated. */
export const ListCollectibles = defineQuery(
  'collections.v1.list_collectibles',
  z.object({ filter: FilterNodeSchema.optional(), page: PageRequestSchema, sort: sortOf(COLLECTIBLE_SORT_FIELDS) }),
  z.object({ total: z.number().int().min(0), collectibles: z.array(CollectibleViewSchema) }),
  { callers: ['gateway'] },
);

/** What the calling player has of one collectible and of its collection. */
export const CollectibleOwnershipSchema = z.object({
  ownedByPlayer: z.boolean(),
  /** First acquisition, ISO 8601 UTC; null when not owned. */
  acquiredAt: z.string().nullable(),
  /** Copies owned: duplicates are counted, not lost. */
  ownedCount: z.number().int().min(0),
  progress: z.object({
    currentItem: z.number().int().min(0),
    totalItems: z.number().int().min(0),
    completionPercentage: z.number().min(0).max(100),
  }),
});
export type CollectibleOwnership = z.infer<typeof CollectibleOwnershipSchema>;

/** One collectible (404 collectible_not_found); the ownership part only when a player calls. */
export const GetCollectible = defineQuery(
  'collections.v1.get_collectible',
  z.object({ collectibleId: ContentIdSchema, includeCollection: z.boolean() }),
  z.object({
    collectible: CollectibleViewSchema,
    rarityInfo: z.object({ level: z.string(), dropRate: z.number() }),
    collection: CollectionViewSchema.optional(),
    ownership: CollectibleOwnershipSchema.optional(),
  }),
  { callers: ['gateway'] },
);

/** One collectible the calling player owns: how many copies and since when. */
export const OwnedCollectibleSchema = z.object({
  collectible: CollectibleViewSchema,
  count: z.number().int().min(1),
  firstAcquiredAt: z.string(),
  lastAcquiredAt: z.string(),
});
export type OwnedCollectible = z.infer<typeof OwnedCollectibleSchema>;

/**
 * The calling player's collection (ctx.playerId required): owned collectibles, paginated, newest
 * acquisition first, and the completeness of every collection of the app.
 */
export const GetPlayerCollection = defineQuery(
  'collections.v1.player_collection',
  z.object({ page: PageRequestSchema }),
  z.object({
    total: z.number().int().min(0),
    totalCopies: z.number().int().min(0),
    items: z.array(OwnedCollectibleSchema),
    collections: z.array(z.object({ collection: CollectionViewSchema, completeness: CompletenessSchema })),
  }),
  { callers: ['gateway'] },
);

/** One granted item converted as a duplicate: its slot, and the currency and amount it became instead. */
export const ConvertedSlotSchema = z.object({
  slot: z.number().int().min(0),
  currency: z.string(),
  /** 0 when the rules give nothing for the item's rarity: converted, nothing credited. */
  amount: z.number().int().min(0),
});
export type ConvertedSlot = z.infer<typeof ConvertedSlotSchema>;

/**
 * What collections sends with the applied notice of an opening's grant (AppliedNotices), so the
 * opening answers what was converted without another round trip: its converted slots, [] for none.
 */
export const GrantAppliedNoticeSchema = z.object({ converted: z.array(ConvertedSlotSchema) });

/**
 * The duplicate conversions of openings of ctx.appId that collections has applied, by opening id
 * (asked by chests for the openings audit and for replayed answers). An opening it has not
 * applied yet is absent: its conversions are unknown, not none.
 */
export const OpeningConversions = defineQuery(
  'collections.v1.opening_conversions',
  z.object({ openingIds: z.array(UuidSchema).max(1000) }),
  z.object({ openings: z.array(z.object({ openingId: UuidSchema, converted: z.array(ConvertedSlotSchema) })) }),
  { callers: ['chests'] },
);

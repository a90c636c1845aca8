import { z } from 'zod';
import {
  UuidSchema,
  type CollectibleView,
  type CollectionView,
  type Completeness as CompletenessView,
  type GetPlayerCollection,
  type ReplyOf,
} from '@ccs/shared';
import { component } from '../openapi/components.js';
import { selfLinks } from '../routes/v1/resource-links.js';
import { Count, fieldsOf, identifierOf, PageMeta, PaginationLinks, ResourceLinks, SelfLink, sparse, Timestamp } from './jsonapi.js';

/**
 * The collection and collectible resources (types `collection` and `collectible`) and the calling
 * player's collection: their response schemas, the documents that hold them, and the functions
 * that render them, typed by those schemas. Every route that answers them takes
 * `fields[collection]` and `fields[collectible]`: the documented attributes and relationships are
 * all optional (`sparse`), while the renderers are typed by the complete resources.
 */

const CollectibleAttributes = z.object({
  name: z.string(),
  description: z.string(),
  collection_id: z.string().describe('Id of the parent collection.'),
  images: z.array(z.string()).describe('Image URLs.'),
});

const CollectibleRelationships = z.object({ collection: z.object({ data: identifierOf('collection') }) });

/** A collectible with the given meta: complete as rendered, or as documented (`fields[collectible]` may leave members out). */
const collectibleSchema = <M extends z.ZodType>(meta: M) =>
  z.object({
    type: z.literal('collectible'),
    id: z.string().describe('Slug-like identifier, not a UUID.'),
    attributes: CollectibleAttributes,
    relationships: CollectibleRelationships,
    links: ResourceLinks.describe('`self`: `/api/v1/collectibles/{id}`.'),
    meta,
  });
const documentedCollectible = <M extends z.ZodType>(meta: M) =>
  collectibleSchema(meta).extend({
    attributes: sparse('collectible', CollectibleAttributes),
    relationships: sparse('collectible', CollectibleRelationships),
  });

const Rarity = z.string().describe('The rarity, e.g. `common`, `rare`, `legendary`.');

/** A collectible of the app's content. */
const CollectibleMeta = z.object({ rarity: Rarity });
export const Collectible = component('Collectible', 'A collectible; its rarity is in `meta`.', documentedCollectible(CollectibleMeta));

const OwnedMeta = z.object({ rarity: Rarity, owned_count: z.number().int().min(1), first_acquired_at: Timestamp, last_acquired_at: Timestamp });

/** A collectible the calling player owns, with its copies. */
export const OwnedCollectible = component(
  'OwnedCollectible',
  'A collectible the calling player owns: copies (duplicates are counted, not lost) and when they arrived.',
  documentedCollectible(OwnedMeta),
);

const CollectionAttributes = z.object({ name: z.string(), description: z.string() });
const CollectionRelationships = z.object({ collectibles: z.object({ data: z.array(identifierOf('collectible')) }) });

/** Fields a client may select with `fields[collection]` and `fields[collectible]`: every attribute and relationship. */
export const COLLECTION_FIELDSETS = {
  collection: [...fieldsOf(CollectionAttributes), ...fieldsOf(CollectionRelationships)],
  collectible: [...fieldsOf(CollectibleAttributes), ...fieldsOf(CollectibleRelationships)],
};

/** A collection with the identifiers of all its collectibles, as rendered. */
const RenderedCollection = z.object({
  type: z.literal('collection'),
  id: z.string().describe('Slug-like identifier, not a UUID.'),
  attributes: CollectionAttributes,
  relationships: CollectionRelationships,
  links: ResourceLinks.describe('`self`: `/api/v1/collections/{id}`.'),
  meta: z
    .object({
      completion_reward: z
        .object({
          currencies: z.record(z.string(), z.number().int()).optional().describe('Amounts per currency code, e.g. `{"gems": 50}`.'),
          chests: z.array(z.string()).optional().describe('Chest type ids (content slugs), one chest each.'),
        })
        .optional()
        .describe('What a player receives, once, on first owning every collectible of it (docs/content.md, "Collection rewards").'),
      completed_at: Timestamp.nullable()
        .optional()
        .describe(
          'With a Bearer token (GET /api/v1/collections, /api/v1/collections/{id}): when the player first owned every collectible of it (its reward was granted then); null until then.',
        ),
    })
    .optional()
    .describe('Present when the collection has a completion reward, or the request has a Bearer token.'),
});

/** A collection, as documented: `fields[collection]` may leave members out. */
export const Collection = component(
  'Collection',
  'A collection: thematically related collectibles.',
  RenderedCollection.extend({ attributes: sparse('collection', CollectionAttributes), relationships: sparse('collection', CollectionRelationships) }),
);

const Fraction = z.number().min(0).max(1);

/** How much of a collection the caller owns. */
const Completeness = z.object({
  total_items: Count.describe("The collection's size."),
  unique_items: Count.describe('Distinct items of it the player owns.'),
  completion_rate: Fraction.describe(
    'unique_items / total_items to four decimal places, rounded down (never 1 before the collection is complete); 0 for anonymous requests.',
  ),
  completed_at: Timestamp.nullable()
    .optional()
    .describe('When the player first owned every collectible of it (its reward was granted then); null until then; absent for anonymous requests.'),
});

/** A page of collections. */
export const CollectionListDocument = component(
  'CollectionListDocument',
  "A page of the app's collections.",
  z.object({ data: z.array(Collection), meta: z.object({ total_count: Count, page: PageMeta }), links: PaginationLinks }),
);

/** One collection. */
export const CollectionDocument = component(
  'CollectionDocument',
  "One collection; `included` holds its collectibles with `include=collectibles`; `meta` the caller's completeness.",
  z.object({
    data: Collection,
    included: z.array(Collectible).optional(),
    meta: z.object({ collectible_count: Count, collection_completeness: Completeness }),
    links: SelfLink,
  }),
);

/** A collection's collectibles. */
export const CollectionCollectiblesDocument = component(
  'CollectionCollectiblesDocument',
  'The collectibles of one collection, all with `collection_id` equal to the path id; `included` holds the collection with `include=collection`.',
  z.object({
    data: z.array(Collectible),
    included: z.array(Collection).optional(),
    meta: z.object({
      total_collectibles: Count,
      collection_info: z.object({ id: z.string(), name: z.string(), completion_rate: Fraction }),
      page: PageMeta,
    }),
    links: PaginationLinks,
  }),
);

/** A page of collectibles. */
export const CollectibleListDocument = component(
  'CollectibleListDocument',
  "A page of the app's collectibles.",
  z.object({ data: z.array(Collectible), meta: z.object({ total_count: Count, page: PageMeta }), links: PaginationLinks }),
);

/** One collectible with its rarity and, for a player, their ownership. */
export const CollectibleDocument = component(
  'CollectibleDocument',
  'One collectible. `meta.rarity_info` always; the ownership members only on authenticated requests.',
  z.object({
    data: Collectible,
    included: z.array(Collection).optional(),
    meta: z.object({
      rarity_info: z.object({ level: Rarity, drop_rate: z.number().min(0).max(1).describe("The rarity's configured base rate.") }),
      owned_by_player: z.boolean().optional(),
      acquired_at: Timestamp.nullable().optional().describe('First acquisition; null when not owned.'),
      owned_count: Count.optional(),
      copies_owned: Count.optional().describe(
        'Copies of it the player holds (as `owned_count`). Past the app\'s `duplicates.max_copies` a new copy is converted into currency instead (docs/content.md, "Duplicates").',
      ),
      collection_progress: z
        .object({
          current_item: Count.describe('Distinct items of the collection the player owns.'),
          total_items: Count,
          completion_percentage: z.number().min(0).max(100),
        })
        .optional(),
    }),
    links: SelfLink,
  }),
);

/** What the calling player owns. */
export const PlayerCollectionDocument = component(
  'PlayerCollectionDocument',
  "The calling player's collectibles, most recent acquisition first; `meta.collections` has the completeness of every collection of the app.",
  z.object({
    data: z.array(OwnedCollectible),
    included: z.array(Collection).optional(),
    meta: z.object({
      player_id: UuidSchema,
      total_count: Count.describe('Distinct collectibles owned.'),
      total_copies: Count.describe('All copies, duplicates included.'),
      page: PageMeta,
      collections: z.array(z.object({ id: z.string(), name: z.string(), ...Completeness.shape })),
    }),
    links: PaginationLinks,
  }),
);

/** A collectible; its rarity sits in resource meta (the spec shows it as an attribute only in opening results). */
export function collectibleResource(c: CollectibleView, base: string): z.output<ReturnType<typeof collectibleSchema<typeof CollectibleMeta>>> {
  return {
    type: 'collectible',
    id: c.id,
    attributes: { name: c.name, description: c.description, collection_id: c.collectionId, images: c.images },
    relationships: { collection: { data: { type: 'collection', id: c.collectionId } } },
    links: selfLinks.collectible(base, c.id),
    meta: { rarity: c.rarity },
  };
}

/** One item of a player's collection as collections answers it. */
type PlayerCollectionItem = ReplyOf<typeof GetPlayerCollection>['items'][number];

/** A collectible as the player owns it: the collectible with the copies held and when they came. */
export function ownedCollectibleResource(i: PlayerCollectionItem, base: string): z.output<ReturnType<typeof collectibleSchema<typeof OwnedMeta>>> {
  const c = collectibleResource(i.collectible, base);
  return { ...c, meta: { ...c.meta, owned_count: i.count, first_acquired_at: i.firstAcquiredAt, last_acquired_at: i.lastAcquiredAt } };
}

/** A collection with the identifiers of all its collectibles; meta only when it has something to say. */
export function collectionResource(
  c: CollectionView,
  base: string,
  meta: { completed_at?: string | null } = {},
): z.output<typeof RenderedCollection> {
  const all = { ...(c.completionReward ? { completion_reward: c.completionReward } : {}), ...meta };
  return {
    type: 'collection',
    id: c.id,
    attributes: { name: c.name, description: c.description },
    relationships: { collectibles: { data: c.collectibleIds.map((id) => ({ type: 'collectible' as const, id })) } },
    links: selfLinks.collection(base, c.id),
    ...(Object.keys(all).length ? { meta: all } : {}),
  };
}

/** With a caller, `completed_at`: when they first owned every collectible of it, null until then (absent for anonymous requests). */
export const completedAtMeta = (player: boolean, completedAt: string | undefined) => (player ? { completed_at: completedAt ?? null } : {});

export const completenessMeta = (c: CompletenessView, player: boolean) => ({
  total_items: c.totalItems,
  unique_items: c.uniqueItems,
  completion_rate: c.completionRate,
  ...completedAtMeta(player, c.completedAt),
});

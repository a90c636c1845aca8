import { z } from 'zod';
import { CollectibleViewSchema, CollectionViewSchema, type ContentCache, type FilterNode, type Pool } from '@ccs/shared';
import * as repo from '../repositories/catalog-repo.js';

type Page = { limit: number; offset: number };

/** Content ids are slugs (the content schema enforces it); anything else cannot exist. */
const isSlug = (id: string) => /^[a-z0-9][a-z0-9-]{0,63}$/.test(id);

const CollectiblePageSchema = z.object({ total: z.number().int(), collectibles: z.array(CollectibleViewSchema) });
const CollectionPageSchema = z.object({ total: z.number().int(), collections: z.array(CollectionViewSchema) });
const CollectionListSchema = z.array(CollectionViewSchema);
const CollectibleListSchema = z.array(CollectibleViewSchema);
const CollectibleDetailSchema = z
  .object({ collectible: CollectibleViewSchema, rarityInfo: z.object({ level: z.string(), dropRate: z.number() }) })
  .nullable();

/**
 * The non-player reads of the app's current content, each cached per content version. Nothing
 * here depends on who asks, so every answer can be shared by all players of the app.
 */
export class CatalogReader {
  constructor(
    private readonly pool: Pool,
    private readonly cache: ContentCache,
  ) {}

  /** The app's current content version (undefined before its content arrived). */
  private version(appId: string): Promise<number | undefined> {
    return this.cache.version(appId, () => repo.contentVersion(this.pool, appId));
  }

  /** One page of the app's collections (empty before the app's content arrived). */
  async collectionsPage(appId: string, page: Page, sort: repo.SortKey[]) {
    const v = await this.version(appId);
    if (v === undefined) return { total: 0, collections: [] };
    return this.cache.read(appId, v, `collections:${JSON.stringify({ page, sort })}`, CollectionPageSchema, () =>
      repo.listCollections(this.pool, appId, page, sort),
    );
  }

  /** Every collection of the app, in content order. */
  async allCollections(appId: string) {
    const v = await this.version(appId);
    if (v === undefined) return [];
    return this.cache.read(appId, v, 'collections:all', CollectionListSchema, () => repo.allCollections(this.pool, appId));
  }

  /** One collection, or null when the app has no such current collection. */
  async collection(appId: string, id: string) {
    const v = isSlug(id) ? await this.version(appId) : undefined;
    if (v === undefined) return null;
    return this.cache.read(appId, v, `collection:${id}`, CollectionViewSchema.nullable(), () => repo.findCollection(this.pool, appId, id));
  }

  /** The collectibles of one collection, in the requested order. */
  async collectiblesOf(appId: string, collectionId: string, sort: repo.SortKey[]) {
    const v = await this.version(appId);
    if (v === undefined) return [];
    return this.cache.read(appId, v, `collection-items:${collectionId}:${JSON.stringify(sort)}`, CollectibleListSchema, () =>
      repo.collectiblesOf(this.pool, appId, collectionId, sort),
    );
  }

  /** One page of the app's collectibles matching a filter. */
  async collectiblesPage(appId: string, filter: FilterNode | undefined, page: Page, sort: repo.SortKey[]) {
    const v = await this.version(appId);
    if (v === undefined) return { total: 0, collectibles: [] };
    return this.cache.read(appId, v, `collectibles:${JSON.stringify({ filter, page, sort })}`, CollectiblePageSchema, () =>
      repo.listCollectibles(this.pool, appId, filter, page, sort),
    );
  }

  /** One collectible with its rarity info, or null. */
  async collectible(appId: string, id: string) {
    const v = isSlug(id) ? await this.version(appId) : undefined;
    if (v === undefined) return null;
    return this.cache.read(appId, v, `collectible:${id}`, CollectibleDetailSchema, () => repo.findCollectible(this.pool, appId, id));
  }
}

import { appOf, endpoint, GetCollection, optionalCallerOf, type Pool } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';
import { completenessOf } from '../catalog/completeness.js';
import { collectionNotFound } from '../errors.js';

/** collections.v1.get_collection: one collection, its collectibles when asked, the caller's completeness. */
export function getCollectionEndpoint(pool: Pool, catalog: CatalogReader) {
  return endpoint(GetCollection, async (req, ctx) => {
    const appId = appOf(ctx);
    const collection = await catalog.collection(appId, req.collectionId);
    if (!collection) throw collectionNotFound(req.collectionId);
    const [collectibles, completeness] = await Promise.all([
      req.includeCollectibles ? catalog.collectiblesOf(appId, collection.id, []) : undefined,
      completenessOf(pool, appId, optionalCallerOf(ctx), collection),
    ]);
    return { collection, completeness, ...(collectibles ? { collectibles } : {}) };
  });
}

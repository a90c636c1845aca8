import { appOf, endpoint, ListCollectionCollectibles, optionalCallerOf, type Pool } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';
import { completenessOf } from '../catalog/completeness.js';
import { collectionNotFound } from '../errors.js';

/** collections.v1.list_collection_collectibles: a collection's collectibles and the caller's completion. */
export function listCollectionCollectiblesEndpoint(pool: Pool, catalog: CatalogReader) {
  return endpoint(ListCollectionCollectibles, async (req, ctx) => {
    const appId = appOf(ctx);
    const collection = await catalog.collection(appId, req.collectionId);
    if (!collection) throw collectionNotFound(req.collectionId);
    const [collectibles, completeness] = await Promise.all([
      catalog.collectiblesOf(appId, collection.id, req.sort),
      completenessOf(pool, appId, optionalCallerOf(ctx), collection),
    ]);
    return { collection, collectibles, completeness };
  });
}

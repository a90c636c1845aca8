import { appOf, endpoint, ListCollections } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';

/** collections.v1.list_collections: one page of the app's collections (cached per content version). */
export function listCollectionsEndpoint(catalog: CatalogReader) {
  return endpoint(ListCollections, async (req, ctx) => catalog.collectionsPage(appOf(ctx), req.page, req.sort));
}

import { appOf, endpoint, ListCollections, optionalCallerOf, type Pool } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';
import { completionsOf } from '../repositories/completions-repo.js';

/**
 * collections.v1.list_collections: one page of the app's collections (cached per content version)
 * and, with a caller, when they completed the collections they completed (read fresh, never cached).
 */
export function listCollectionsEndpoint(pool: Pool, catalog: CatalogReader) {
  return endpoint(ListCollections, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = optionalCallerOf(ctx);
    const [page, completed] = await Promise.all([
      catalog.collectionsPage(appId, req.page, req.sort),
      playerId ? completionsOf(pool, appId, playerId) : undefined,
    ]);
    if (!completed) return page;
    const completedAt = Object.fromEntries(
      page.collections.flatMap((c) => {
        const at = completed.get(c.id);
        return at ? [[c.id, at.toISOString()]] : [];
      }),
    );
    return { ...page, completedAt };
  });
}

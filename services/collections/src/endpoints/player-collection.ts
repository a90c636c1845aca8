import { appOf, callerOf, endpoint, GetPlayerCollection, type CollectibleView, type Pool } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';
import { completenessFrom } from '../catalog/completeness.js';
import { completionsOf } from '../repositories/completions-repo.js';
import { ownedByCollection, ownedPage } from '../repositories/ownership-repo.js';

/**
 * collections.v1.player_collection: the calling player's owned collectibles (newest acquisition
 * first, copies counted) and the completeness of every collection of the app.
 */
export function playerCollectionEndpoint(pool: Pool, catalog: CatalogReader) {
  return endpoint(GetPlayerCollection, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const [page, byCollection, collections, completed] = await Promise.all([
      ownedPage(pool, appId, playerId, req.page),
      ownedByCollection(pool, appId, playerId),
      catalog.allCollections(appId),
      completionsOf(pool, appId, playerId),
    ]);
    const details = await Promise.all(page.map((i) => catalog.collectible(appId, i.collectibleId)));
    const items = page.flatMap((i, n) => {
      const collectible: CollectibleView | undefined = details[n]?.collectible;
      return collectible ? [{ collectible, count: i.count, firstAcquiredAt: i.firstAcquiredAt, lastAcquiredAt: i.lastAcquiredAt }] : [];
    });
    let total = 0;
    let totalCopies = 0;
    for (const owned of byCollection.values()) {
      total += owned.unique;
      totalCopies += owned.copies;
    }
    return {
      total,
      totalCopies,
      items,
      collections: collections.map((c) => ({
        collection: c,
        completeness: completenessFrom(c, byCollection.get(c.id)?.unique ?? 0, completed.get(c.id)),
      })),
    };
  });
}

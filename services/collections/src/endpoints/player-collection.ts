import { endpoint, GetPlayerCollection, type CollectibleView, type Pool } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';
import { completenessFrom } from '../catalog/completeness.js';
import { appOf, playerOf } from '../errors.js';
import { ownedPage, uniqueOwnedByCollection } from '../repositories/ownership-repo.js';

/**
 * collections.v1.player_collection: the calling player's owned collectibles (newest acquisition
 * first, copies counted) and the completeness of every collection of the app.
 */
export function playerCollectionEndpoint(pool: Pool, catalog: CatalogReader) {
  return endpoint(GetPlayerCollection, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = playerOf(ctx);
    const [page, uniqueByCollection, collections] = await Promise.all([
      ownedPage(pool, appId, playerId, req.page),
      uniqueOwnedByCollection(pool, appId, playerId),
      catalog.allCollections(appId),
    ]);
    const details = await Promise.all(page.items.map((i) => catalog.collectible(appId, i.collectibleId)));
    const items = page.items.flatMap((i, n) => {
      const collectible: CollectibleView | undefined = details[n]?.collectible;
      return collectible ? [{ collectible, count: i.count, firstAcquiredAt: i.firstAcquiredAt, lastAcquiredAt: i.lastAcquiredAt }] : [];
    });
    return {
      total: page.total,
      totalCopies: page.copies,
      items,
      collections: collections.map((c) => ({ collection: c, completeness: completenessFrom(c, uniqueByCollection.get(c.id) ?? 0) })),
    };
  });
}

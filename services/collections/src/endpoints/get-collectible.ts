import { appOf, endpoint, GetCollectible, optionalCallerOf, type CollectibleOwnership, type CollectionView, type Pool } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';
import { completenessFrom } from '../catalog/completeness.js';
import { collectibleNotFound } from '../errors.js';
import { ownershipInCollection } from '../repositories/ownership-repo.js';

/** What the calling player has of a collectible and of its collection (read fresh, never cached; one query). */
async function ownership(
  pool: Pool,
  appId: string,
  playerId: string,
  collectibleId: string,
  collection: CollectionView,
): Promise<CollectibleOwnership> {
  const owned = await ownershipInCollection(pool, appId, playerId, collectibleId, collection.id);
  const completeness = completenessFrom(collection, owned.uniqueInCollection);
  return {
    ownedByPlayer: owned.count > 0,
    acquiredAt: owned.firstAcquiredAt,
    ownedCount: owned.count,
    progress: {
      currentItem: completeness.uniqueItems,
      totalItems: completeness.totalItems,
      completionPercentage: completeness.totalItems === 0 ? 0 : (100 * completeness.uniqueItems) / completeness.totalItems,
    },
  };
}

/**
 * collections.v1.get_collectible: one collectible with its rarity info, its collection when asked,
 * and, only when a player calls, what that player owns of it.
 */
export function getCollectibleEndpoint(pool: Pool, catalog: CatalogReader) {
  return endpoint(GetCollectible, async (req, ctx) => {
    const appId = appOf(ctx);
    const caller = optionalCallerOf(ctx);
    const found = await catalog.collectible(appId, req.collectibleId);
    if (!found) throw collectibleNotFound(req.collectibleId);
    if (!req.includeCollection && !caller) return found;
    // Content keeps every collectible's collection, so it is only missing if content changed meanwhile.
    const collection = await catalog.collection(appId, found.collectible.collectionId);
    if (!collection) throw collectibleNotFound(req.collectibleId);
    return {
      ...found,
      ...(req.includeCollection ? { collection } : {}),
      ...(caller ? { ownership: await ownership(pool, appId, caller, found.collectible.id, collection) } : {}),
    };
  });
}

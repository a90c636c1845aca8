import type { CollectionView, Completeness, Queryable } from '@ccs/shared';
import { completionsOf } from '../repositories/completions-repo.js';
import { uniqueOwnedByCollection } from '../repositories/ownership-repo.js';

/** Completeness of one collection from already known owned counts (0 owned for anonymous calls), and when it was completed. */
export function completenessFrom(collection: CollectionView, uniqueOwned: number, completedAt?: Date): Completeness {
  const totalItems = collection.collectibleIds.length;
  return {
    totalItems,
    uniqueItems: uniqueOwned,
    completionRate: totalItems === 0 ? 0 : uniqueOwned / totalItems,
    ...(completedAt ? { completedAt: completedAt.toISOString() } : {}),
  };
}

/**
 * How much of a collection the calling player owns: never cached, read fresh so a grant shows at
 * once. Without a player (anonymous request) nothing is owned.
 */
export async function completenessOf(q: Queryable, appId: string, playerId: string | undefined, collection: CollectionView): Promise<Completeness> {
  if (!playerId) return completenessFrom(collection, 0);
  const [owned, completed] = await Promise.all([uniqueOwnedByCollection(q, appId, playerId, collection.id), completionsOf(q, appId, playerId)]);
  return completenessFrom(collection, owned.get(collection.id) ?? 0, completed.get(collection.id));
}

import type { CollectionView, Completeness, Queryable } from '@ccs/shared';
import { completionsOf } from '../repositories/completions-repo.js';
import { uniqueOwnedByCollection } from '../repositories/ownership-repo.js';

/**
 * The share of a collection owned, to four decimal places, rounded down: readable (2 of 12 is
 * 0.1666, not 0.16666666666666666) and never 1 before every item is owned (19,999 of 20,000 is
 * 0.9999). `unique_items` and `total_items` carry the exact figures.
 */
export const completionRate = (owned: number, total: number): number => (total === 0 ? 0 : Math.floor((owned * 10_000) / total) / 10_000);

/** Completeness of one collection from already known owned counts (0 owned for anonymous calls), and when it was completed. */
export function completenessFrom(collection: CollectionView, uniqueOwned: number, completedAt?: Date): Completeness {
  const totalItems = collection.collectibleIds.length;
  return {
    totalItems,
    uniqueItems: uniqueOwned,
    completionRate: completionRate(uniqueOwned, totalItems),
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

import { consumer, DURABLE, SparkGranted } from '@ccs/shared';
import type { z } from 'zod';
import { itemsApplier, type ItemsGrant, type OpeningsConsumerDeps } from './opening-granted.js';

/** Durable name the chests service waits on when a spark exchange answers. */
export const SPARKS_CONSUMER = DURABLE.collectionsSparks;

/** A spark exchange's grant as the items it adds: its collectible as slot 0 under the exchange id, acquired at the exchange's time. */
export const itemsOfSpark = (s: z.infer<typeof SparkGranted.payload>): ItemsGrant => ({
  openingId: s.exchangeId,
  appId: s.appId,
  playerId: s.playerId,
  openedAt: s.exchangedAt,
  rulesVersion: s.rulesVersion,
  items: [{ slot: 0, collectibleId: s.collectibleId, collectionId: s.collectionId, rarity: s.rarity }],
});

/**
 * Adds the collectibles of banners' spark exchanges to the players' collections, exactly once per
 * exchange (keyed by exchange id and slot 0), as an opening's item is added (itemsApplier): judged
 * by the duplicate rules of the exchange's content version, completions and their rewards after.
 */
export function sparkGrantedConsumer(deps: OpeningsConsumerDeps) {
  const apply = itemsApplier(deps);
  return consumer({
    durable: SPARKS_CONSUMER,
    event: SparkGranted,
    processedId: (spark) => spark.exchangeId,
    // As for openings: an exchange may arrive before its content version.
    maxDeliver: 16,
    async applyIdempotent(_db, batch) {
      const grants = batch.map((d) => ({ ...d, payload: itemsOfSpark(d.payload) }));
      const applied = await apply(grants);
      grants.forEach((g, i) => (batch[i]!.notice = g.notice));
      return applied;
    },
  });
}

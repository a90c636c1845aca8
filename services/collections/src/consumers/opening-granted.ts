import { consumer, OpeningGranted } from '@ccs/shared';
import { insertGrantedItemsBatch } from '../repositories/ownership-repo.js';

/** Durable name the chests service waits on (it asks to be notified when this consumer applied a grant). */
export const OPENINGS_CONSUMER = 'collections-openings';

/**
 * Adds the items of chest openings to the players' collections: every grant pulled meanwhile in
 * one transaction with the record that each message was processed (the runtime records the ids
 * and passes only grants never applied), so a second delivery changes nothing. The items keep
 * the opening's time as their acquisition time.
 */
export function openingGrantedConsumer() {
  return consumer({
    durable: OPENINGS_CONSUMER,
    event: OpeningGranted,
    // Keyed by the opening, so a re-publish under another message id is recognised too (the
    // items' (opening, slot) key would stop it as well).
    processedId: (grant) => grant.openingId,
    async applyBatch(tx, batch) {
      for (const { payload } of batch) {
        // Not retryable into success: the runtime parks it after its bounded retries.
        if (Number.isNaN(Date.parse(payload.openedAt))) throw new Error(`opening ${payload.openingId} has an invalid openedAt`);
      }
      await insertGrantedItemsBatch(tx, batch.map((d) => d.payload));
    },
  });
}

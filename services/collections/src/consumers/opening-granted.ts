import { consumer, OpeningGranted } from '@ccs/shared';
import { insertGrantedItemsBatch } from '../repositories/ownership-repo.js';

/** Durable name the chests service waits on (it asks to be notified when this consumer applied a grant). */
export const OPENINGS_CONSUMER = 'collections-openings';

/**
 * Adds the items of chest openings to the players' collections: every grant pulled meanwhile in
 * ONE statement, idempotent by the items' own key (opening, slot), so a second delivery, or the
 * same grant re-published under another message id, adds nothing; no transaction and no
 * processed-message record are needed around it. The items keep the opening's time as their
 * acquisition time.
 */
export function openingGrantedConsumer() {
  return consumer({
    durable: OPENINGS_CONSUMER,
    event: OpeningGranted,
    processedId: (grant) => grant.openingId,
    async applyIdempotent(db, batch) {
      for (const { payload } of batch) {
        // Not retryable into success: the runtime tries the batch's grants one by one, then parks this one.
        if (Number.isNaN(Date.parse(payload.openedAt))) throw new Error(`opening ${payload.openingId} has an invalid openedAt`);
      }
      return insertGrantedItemsBatch(db, batch.map((d) => d.payload));
    },
  });
}

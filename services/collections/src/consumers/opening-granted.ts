import { consumer, markProcessed, OpeningGranted, withTransaction, type Pool } from '@ccs/shared';
import { insertGrantedItems } from '../repositories/ownership-repo.js';

/** Durable name the chests service waits on (`applied.<opening id>.collections-openings`). */
export const OPENINGS_CONSUMER = 'collections-openings';

/**
 * Adds the items of a chest opening to the player's collection, in one transaction with the
 * record that the message was processed: a second delivery changes nothing. The items keep the
 * opening's time as their acquisition time.
 */
export function openingGrantedConsumer(pool: Pool) {
  return consumer({
    durable: OPENINGS_CONSUMER,
    event: OpeningGranted,
    async handle(grant) {
      // Not retryable into success: the runtime parks it after its bounded retries.
      if (Number.isNaN(Date.parse(grant.openedAt))) throw new Error(`opening ${grant.openingId} has an invalid openedAt`);
      await withTransaction(pool, async (tx) => {
        // Keyed by the opening (its message id as chests publishes it); the rows' (opening, slot)
        // key would stop a re-publish under another message id as well.
        if (!(await markProcessed(tx, grant.openingId, OPENINGS_CONSUMER))) return;
        await insertGrantedItems(tx, grant);
      });
    },
  });
}

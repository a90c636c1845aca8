import { consumer, markProcessed, OpeningGranted, withTransaction, type Pool } from '@ccs/shared';

/** Durable name of the experience consumer (`applied.<opening id>.players-experience`). */
export const EXPERIENCE_CONSUMER = 'players-experience';

/**
 * Adds the experience of a chest opening to the player, in one transaction with the record that
 * the message was processed: a second delivery adds nothing. An opening for a player the app does
 * not have fails, so the runtime retries it a bounded number of times and then parks it.
 */
export function experienceConsumer(pool: Pool) {
  return consumer({
    durable: EXPERIENCE_CONSUMER,
    event: OpeningGranted,
    async handle(grant) {
      await withTransaction(pool, async (tx) => {
        // Keyed by the opening (its message id as chests publishes it), so a re-publish under
        // another message id is recognised too.
        if (!(await markProcessed(tx, grant.openingId, EXPERIENCE_CONSUMER))) return;
        const r = await tx.query('UPDATE players SET experience = experience + $3 WHERE app_id = $1 AND id = $2', [
          grant.appId,
          grant.playerId,
          grant.experience,
        ]);
        if (r.rowCount !== 1) throw new Error(`opening ${grant.openingId}: no player ${grant.playerId} in app ${grant.appId}`);
      });
    },
  });
}

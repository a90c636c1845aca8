import { consumer, DURABLE, OpeningGranted } from '@ccs/shared';
import { addExperience } from '../repositories/players-repo.js';

/** Durable name of the experience consumer (`applied.<opening id>.players-experience`). */
export const EXPERIENCE_CONSUMER = DURABLE.playersExperience;

/**
 * Adds the experience of chest openings to the players: every grant pulled meanwhile in one
 * transaction with the record that each was processed (keyed by the opening, so a re-publish under
 * another message id is recognised too): a second delivery adds nothing. An opening for a player
 * the app does not have fails; the runtime then retries the batch's grants one by one, and parks
 * that one after its bounded retries.
 */
export function experienceConsumer() {
  return consumer({
    durable: EXPERIENCE_CONSUMER,
    event: OpeningGranted,
    processedId: (grant) => grant.openingId,
    async applyBatch(tx, batch) {
      // One row per player, in key order (concurrent batches lock players in the same order).
      const gains = new Map<string, { appId: string; playerId: string; xp: number }>();
      for (const { payload: g } of batch) {
        const key = `${g.appId} ${g.playerId}`;
        const at = gains.get(key) ?? { appId: g.appId, playerId: g.playerId, xp: 0 };
        at.xp += g.experience;
        gains.set(key, at);
      }
      const rows = [...gains.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
      const found = await addExperience(tx, rows);
      if (found.size !== rows.length) {
        const missing = rows.filter((g) => !found.has(g.playerId)).map((g) => `${g.playerId} in app ${g.appId}`);
        throw new Error(`openings for unknown players: ${missing.join(', ')}`);
      }
    },
  });
}

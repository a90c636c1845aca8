import type { Queryable } from '@ccs/shared';

/** A keyed batch made before: its chests (in order) and openings (written by recordOpenings). */
export async function findBatch(
  db: Queryable,
  appId: string,
  playerId: string,
  key: string,
): Promise<{ chestIds: string[]; openingIds: string[] } | undefined> {
  const r = await db.query<{ chest_ids: string[]; opening_ids: string[] }>(
    'SELECT chest_ids, opening_ids FROM opening_batches WHERE app_id = $1 AND player_id = $2 AND idempotency_key = $3',
    [appId, playerId, key],
  );
  return r.rows[0] && { chestIds: r.rows[0].chest_ids, openingIds: r.rows[0].opening_ids };
}

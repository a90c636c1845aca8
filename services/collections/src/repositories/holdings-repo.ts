import type { Queryable } from '@ccs/shared';

/**
 * The copies of one collectible the player holds (0: none). Read under the holding's lock
 * (duplicates-repo.ts `lockHoldings`) by whoever then takes or gives copies of it.
 */
export async function copiesHeld(q: Queryable, appId: string, playerId: string, collectibleId: string): Promise<number> {
  const r = await q.query<{ copies: number }>('SELECT copies FROM player_collectibles WHERE app_id = $1 AND player_id = $2 AND collectible_id = $3', [
    appId,
    playerId,
    collectibleId,
  ]);
  return r.rows[0]?.copies ?? 0;
}

/**
 * Takes `n` copies out of the player's collection (a dissolve, or a copy into a trade's escrow),
 * under the holding's lock, the caller having read that at least `n` are held: the tally goes
 * down, and the row goes when none is left (a held collectible is a row with copies > 0).
 */
export async function takeCopies(q: Queryable, appId: string, playerId: string, collectibleId: string, n: number): Promise<void> {
  await q.query(
    `WITH gone AS (
       DELETE FROM player_collectibles WHERE app_id = $1 AND player_id = $2 AND collectible_id = $3 AND copies = $4 RETURNING 1
     )
     UPDATE player_collectibles SET copies = copies - $4
      WHERE app_id = $1 AND player_id = $2 AND collectible_id = $3 AND copies > $4`,
    [appId, playerId, collectibleId, n],
  );
}

/**
 * Adds one copy to the player's collection (a copy back from escrow, or one received in a trade),
 * acquired now. Returns whether it is the player's first copy (a collection may be completed).
 */
export async function giveCopy(q: Queryable, appId: string, playerId: string, collectibleId: string): Promise<boolean> {
  const r = await q.query<{ first: boolean }>(
    `INSERT INTO player_collectibles AS pc (app_id, player_id, collectible_id, copies, first_acquired_at, last_acquired_at)
     VALUES ($1, $2, $3, 1, now(), now())
     ON CONFLICT (app_id, player_id, collectible_id) DO UPDATE SET copies = pc.copies + 1, last_acquired_at = now()
     RETURNING xmax = 0 AS first`,
    [appId, playerId, collectibleId],
  );
  return r.rows[0]!.first;
}

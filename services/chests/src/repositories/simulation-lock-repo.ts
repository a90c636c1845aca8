import type pg from 'pg';

/** The simulation lock's key: a 64-bit hash of the app id under a name of its own. */
const KEY = "hashtextextended('ccs.simulation:' || $1, 0)";

/**
 * Opens a transaction on `session` and tries the app's simulation lock in it (an advisory
 * transaction lock: released by the transaction's end, or by Postgres when the connection dies).
 * True when taken; false when another run holds it.
 */
export async function tryAppSimulationLock(session: pg.Client, appId: string): Promise<boolean> {
  await session.query('BEGIN');
  const { rows } = await session.query<{ taken: boolean }>(`SELECT pg_try_advisory_xact_lock(${KEY}) AS taken`, [appId]);
  return rows[0]!.taken;
}

/** Ends the lock's transaction (the lock with it). */
export async function releaseAppSimulationLock(session: pg.Client): Promise<void> {
  await session.query('ROLLBACK');
}

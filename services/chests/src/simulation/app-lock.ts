import pg from 'pg';
import { releaseAppSimulationLock, tryAppSimulationLock } from '../repositories/simulation-lock-repo.js';
import { simulationErrors } from '../errors.js';

/**
 * One simulation per app at a time across every chests replica: a Postgres advisory lock on a key
 * derived from the app id, taken with pg_try_advisory_xact_lock in a transaction held open while
 * the simulation waits for its turn and runs, on a connection of its own (outside the service's
 * pool, so runs never starve openings of connections), and rolled back when the run ends. A replica that dies mid-run loses that
 * connection, and Postgres aborts its transaction and the lock with it: nothing stays locked, and
 * no lease needs renewing. A transaction-level lock (not a session one) also holds through
 * PgBouncer in transaction mode, which keeps a transaction on one server connection.
 */

/** Takes the app's lock or answers 429 simulation_busy (Retry-After: `retryAfterSeconds`); resolves to its release (the transaction's end). */
export async function lockAppSimulation(databaseUrl: string, appId: string, retryAfterSeconds: number): Promise<() => Promise<void>> {
  const session = new pg.Client({ connectionString: databaseUrl, application_name: 'chests simulation lock' });
  // A connection lost mid-run has ended its lock already; the run finishes and end() is a no-op.
  session.on('error', () => undefined);
  let taken: boolean;
  try {
    await session.connect();
    taken = await tryAppSimulationLock(session, appId);
  } catch {
    await session.end().catch(() => undefined);
    throw simulationErrors.lockUnavailable();
  }
  const release = async () => {
    await releaseAppSimulationLock(session).catch(() => undefined);
    await session.end().catch(() => undefined);
  };
  if (!taken) {
    await release();
    throw simulationErrors.busy(retryAfterSeconds);
  }
  return release;
}

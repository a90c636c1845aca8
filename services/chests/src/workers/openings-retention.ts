import { periodicWorker, type Logger, type Pool, type Worker } from '@ccs/shared';

const BATCH = 5000;

/** Deletes openings older than `days`, a batch per statement so no lock is held long; returns how many. */
export async function deleteOpeningsOlderThan(pool: Pool, days: number): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await pool.query(
      `DELETE FROM openings WHERE id IN (
         SELECT id FROM openings WHERE opened_at < now() - make_interval(days => $1) LIMIT $2)`,
      [days, BATCH],
    );
    total += r.rowCount ?? 0;
    if ((r.rowCount ?? 0) < BATCH) return total;
  }
}

/**
 * Keeps openings OPENINGS_RETENTION_DAYS and no longer: once at start, then daily. Replicas may
 * all run it (the DELETE is idempotent). The inventory rows of opened chests stay, so a chest is
 * never opened twice and a grant re-delivered years later still adds nothing.
 */
export function openingsRetention(pool: Pool, log: Logger, days: number, everyMs = 24 * 60 * 60 * 1000): Worker {
  return periodicWorker({ log, everyMs, what: 'openings past their retention deleted', pass: () => deleteOpeningsOlderThan(pool, days) });
}

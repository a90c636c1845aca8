import { periodicWorker, type Logger, type Pool, type Worker } from '@ccs/shared';
import { deleteOpeningsBatchOlderThan } from '../repositories/openings-retention-repo.js';

const BATCH = 5000;

/** Deletes openings older than `days`, a batch per statement so no lock is held long; returns how many. */
export async function deleteOpeningsOlderThan(pool: Pool, days: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteOpeningsBatchOlderThan(pool, days, BATCH);
    total += deleted;
    if (deleted < BATCH) return total;
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

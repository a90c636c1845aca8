import { complianceInForce, ComplianceSchema, periodicWorker, type Logger, type Pool, type Worker } from '@ccs/shared';
import { currentCompliance, deleteOpeningKeysBatchOlderThan, deleteOpeningsBatchOlderThan } from '../repositories/openings-retention-repo.js';

const BATCH = 5000;

/**
 * The apps whose current compliance keeps draw records longer than `days` (a rule pack's
 * keep_draw_records_days, e.g. CN's 90), with how long.
 */
async function appsKeepingLonger(pool: Pool, days: number): Promise<Record<string, number>> {
  const keep: Record<string, number> = {};
  for (const { appId, compliance } of await currentCompliance(pool)) {
    const parsed = ComplianceSchema.safeParse(compliance);
    const longer = parsed.success ? complianceInForce(parsed.data).keep_draw_records_days : undefined;
    if (longer !== undefined && longer > days) keep[appId] = longer;
  }
  return keep;
}

/**
 * Deletes openings older than `days` (an app whose rule packs keep draw records longer: older
 * than that), and the Idempotency-Keys that made them, a batch per statement so no lock is held
 * long; returns how many openings.
 */
export async function deleteOpeningsOlderThan(pool: Pool, days: number): Promise<number> {
  const keepLonger = await appsKeepingLonger(pool, days);
  let total = 0;
  for (;;) {
    const deleted = await deleteOpeningsBatchOlderThan(pool, days, BATCH, keepLonger);
    total += deleted;
    if (deleted < BATCH) break;
  }
  while ((await deleteOpeningKeysBatchOlderThan(pool, days, BATCH, keepLonger)) === BATCH);
  return total;
}

/**
 * Keeps openings OPENINGS_RETENTION_DAYS (longer for an app whose rule packs ask it: CN keeps draw
 * records 90 days) and no longer: once at start, then daily. Replicas may
 * all run it (the DELETE is idempotent). The inventory rows of opened chests stay, so a chest is
 * never opened twice and a grant re-delivered years later still adds nothing.
 */
export function openingsRetention(pool: Pool, log: Logger, days: number, everyMs = 24 * 60 * 60 * 1000): Worker {
  return periodicWorker({ log, everyMs, what: 'openings past their retention deleted', pass: () => deleteOpeningsOlderThan(pool, days) });
}

import { periodicWorker, type Logger, type Pool, type Worker } from '@ccs/shared';
import { deleteKeysOlderThan } from '../repositories/idempotency-repo.js';

/**
 * Forgets Idempotency-Keys past their retention window (a client retries within minutes, not
 * days), once at start and then hourly. Replicas may all run it: the DELETE is idempotent.
 */
export function idempotencySweeper(pool: Pool, log: Logger, ttlHours: number, everyMs = 60 * 60 * 1000): Worker {
  return periodicWorker({ log, everyMs, what: 'expired idempotency keys deleted', pass: () => deleteKeysOlderThan(pool, ttlHours) });
}

import { periodicWorker, type Logger, type Pool, type Worker } from '@ccs/shared';
import { deleteRegistrationKeysOlderThan } from '../repositories/registration-keys-repository.js';

/**
 * Forgets registration Idempotency-Keys past IDEMPOTENCY_KEY_TTL_HOURS (reads ignore them
 * already), once at start and then hourly. Replicas may all run it: the DELETE is idempotent.
 */
export function registrationKeysSweeper(pool: Pool, log: Logger, ttlHours: number, everyMs = 60 * 60 * 1000): Worker {
  return periodicWorker({
    log,
    everyMs,
    what: 'expired registration idempotency keys deleted',
    pass: () => deleteRegistrationKeysOlderThan(pool, ttlHours),
  });
}

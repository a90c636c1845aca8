import { periodicWorker, type Logger, type Pool, type Worker } from '@ccs/shared';
import { deleteGuestKeysOlderThan } from '../repositories/guest-keys-repo.js';
import { deleteRegistrationKeysOlderThan } from '../repositories/registration-keys-repo.js';

/**
 * Forgets registration and guest-creation Idempotency-Keys past IDEMPOTENCY_KEY_TTL_HOURS (reads
 * ignore them already), once at start and then hourly. Replicas may all run it: the DELETEs are
 * idempotent.
 */
export function registrationKeysSweeper(pool: Pool, log: Logger, ttlHours: number, everyMs = 60 * 60 * 1000): Worker {
  return periodicWorker({
    log,
    everyMs,
    what: 'expired registration and guest idempotency keys deleted',
    pass: async () => (await deleteRegistrationKeysOlderThan(pool, ttlHours)) + (await deleteGuestKeysOlderThan(pool, ttlHours)),
  });
}

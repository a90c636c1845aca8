import type { Logger, Pool, Worker } from '@ccs/shared';
import { deleteRegistrationKeysOlderThan } from '../repositories/registration-keys-repository.js';

/**
 * Forgets registration Idempotency-Keys past IDEMPOTENCY_KEY_TTL_HOURS (reads ignore them
 * already), once at start and then hourly. Replicas may all run it: the DELETE is idempotent.
 */
export function registrationKeysSweeper(pool: Pool, log: Logger, ttlHours: number, everyMs = 60 * 60 * 1000): Worker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const sweep = () => {
    running = deleteRegistrationKeysOlderThan(pool, ttlHours)
      .then((n) => {
        if (n > 0) log.info({ deleted: n }, 'expired registration idempotency keys deleted');
      })
      .catch((err) => log.warn({ err: String(err) }, 'registration key sweep failed; will retry'));
  };
  return {
    start() {
      sweep();
      timer = setInterval(sweep, everyMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

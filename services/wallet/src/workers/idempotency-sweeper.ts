import type { Logger, Pool, Worker } from '@ccs/shared';
import { deleteKeysOlderThan } from '../repositories/idempotency-repo.js';

/**
 * Forgets Idempotency-Keys past their retention window (a client retries within minutes, not
 * days), once at start and then hourly. Replicas may all run it: the DELETE is idempotent.
 */
export function idempotencySweeper(pool: Pool, log: Logger, ttlHours: number, everyMs = 60 * 60 * 1000): Worker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const sweep = () => {
    running = deleteKeysOlderThan(pool, ttlHours)
      .then((n) => {
        if (n > 0) log.info({ deleted: n }, 'expired idempotency keys deleted');
      })
      .catch((err) => log.warn({ err: String(err) }, 'idempotency key sweep failed; will retry'));
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

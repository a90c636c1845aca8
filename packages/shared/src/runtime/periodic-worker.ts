import type { Logger } from '../config/logger.js';
import type { Worker } from './service.js';

/**
 * A worker that runs `pass` once at start and then every `everyMs` (housekeeping such as
 * forgetting expired keys). A pass that throws is logged and tried again next time; `stop` waits
 * for the pass under way. `pass` returns how many things it did, logged as `what` when not 0.
 */
export function periodicWorker(opts: { log: Logger; everyMs: number; what: string; pass: () => Promise<number> }): Worker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const run = () => {
    running = opts
      .pass()
      .then((n) => void (n > 0 && opts.log.info({ count: n }, opts.what)))
      .catch((err) => opts.log.warn({ err: String(err) }, `${opts.what}: pass failed; will retry`));
  };
  return {
    start() {
      run();
      timer = setInterval(run, opts.everyMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

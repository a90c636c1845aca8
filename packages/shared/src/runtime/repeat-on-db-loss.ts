import { repeatable, type SubjectContract } from '../contracts/subject.js';
import { toAppError } from '../errors/app-error.js';
import { attemptFits } from './deadline.js';

/**
 * How long a service handles a repeatable request again after losing its database connection,
 * by the caller's bound: a read within the gateway's read bound (NATS_READ_TIMEOUT_MS, 2 s), a
 * keyed write within the write bound (5 s), each leaving room for the answer. A call made with a
 * deadline (deadline.ts) cuts them to what it leaves: nested calls repeat only within their caller's.
 */
export const DB_LOSS_WINDOW_MS = { read: 1_200, keyedWrite: 3_000 } as const;

/** DB_LOSS_WINDOW_MS for a contract: a read's or a keyed write's. */
function dbLossWindow(contract: SubjectContract): number {
  return contract.readOnly ? DB_LOSS_WINDOW_MS.read : DB_LOSS_WINDOW_MS.keyedWrite;
}

/**
 * Runs `handle`; when it fails because the database was lost (503 `database_unavailable`: a
 * Postgres restart or failover, a terminated backend, PgBouncer reconnecting) and handling the
 * request again cannot apply it twice (`repeatable`: a read, or a keyed-retry write carrying its
 * idempotencyKey, whose second handling finds what a COMMIT cut off did), it handles it again
 * after a short pause (50 ms, doubling to 400 ms) until the window ends, and, for a call with a
 * deadline, only while another attempt as long as the last one still ends by `answerBy`
 * (deadline.ts): the answer then reaches the caller before it stops waiting. Any other failure,
 * or the last one, is the answer. An unkeyed write is never repeated: a lost COMMIT may have applied it.
 */
export async function repeatOnDatabaseLoss<T>(
  contract: SubjectContract,
  request: unknown,
  handle: () => Promise<T>,
  opts: { windowMs?: number; answerBy?: number; onRepeat?: () => void } = {},
): Promise<T> {
  const windowMs = opts.windowMs ?? dbLossWindow(contract);
  const started = Date.now();
  let pause = 50;
  for (;;) {
    const attemptAt = Date.now();
    try {
      return await handle();
    } catch (err) {
      const lost = toAppError(err).code === 'database_unavailable';
      const now = Date.now();
      if (!lost || !repeatable(contract, request) || now - started + pause > windowMs) throw err;
      if (!attemptFits(opts.answerBy, pause, now - attemptAt, now)) throw err;
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 400);
      opts.onRepeat?.();
    }
  }
}

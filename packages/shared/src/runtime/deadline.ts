import type { CallContext } from '../contracts/context.js';

/**
 * Deadlines passed down with a call, so nested repeats fit the outermost caller's bound.
 *
 * Every Bus call carries the time its caller will wait (`ccs-budget-ms`, milliseconds: relative,
 * so no two clocks need agree); the service handling it sets `CallContext.deadline` (its own
 * clock) from it on arrival. Within that deadline the service keeps ANSWER_ROOM_MS for its own
 * answer, and spends the rest on repeats after a lost database (repeat-on-db-loss.ts) and on the
 * calls it makes, whose bound (and so their own deadline) is what is left of it. Each level thus
 * answers before the level above stops waiting: a purchase whose database was lost is answered 503
 * (retry with the same key) inside the gateway's bound, never 504.
 */

/**
 * What a handler keeps, out of its deadline, for the work after what it waits on (a nested call, a
 * repeat): a compensation on its own database, its answer crossing NATS on a loaded machine.
 */
export const ANSWER_ROOM_MS = 750;

/**
 * The least time a new attempt after a lost database is given: one attempt (a purchase: a record,
 * a debit in the wallet, a compensation) on a database that fails fast.
 */
export const ATTEMPT_ROOM_MS = 1_000;

/** When the handler must have its answer ready: the deadline less ANSWER_ROOM_MS (undefined without a deadline). */
export function answerBy(ctx: Pick<CallContext, 'deadline'>): number | undefined {
  return ctx.deadline === undefined ? undefined : ctx.deadline - ANSWER_ROOM_MS;
}

/** The bound of a nested call: the contract's bound, cut to what is left until answerBy when the call has a deadline (never below 0). */
export function nestedBound(ctx: Pick<CallContext, 'deadline'>, bound: number, now = Date.now()): number {
  const by = answerBy(ctx);
  return by === undefined ? bound : Math.max(0, Math.min(bound, by - now));
}

/**
 * Whether one more attempt after `pause` fits before `by` (answerBy): it may take as long as the
 * last one did (a failing attempt on a lost database can wait on a pooler's queue, and a
 * compensation after it), and never less than ATTEMPT_ROOM_MS. No `by` (no deadline): it fits.
 */
export function attemptFits(by: number | undefined, pause: number, lastAttemptMs: number, now = Date.now()): boolean {
  return by === undefined || now + pause + Math.max(lastAttemptMs, ATTEMPT_ROOM_MS) <= by;
}

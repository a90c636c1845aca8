import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, isUniqueViolation, withTransaction, type CallContext } from '@ccs/shared';
import { checkPaidUseNow, type GateDeps } from '../compliance/gate.js';
import { chestErrors, keyErrors } from '../errors.js';
import { checkedUnlock, chestNow, type UnlockCommand, type UnlockOutcome } from '../opening/unlock-timer.js';
import { ONE_SKIP_PER_CHEST, skipBeingPaid } from '../repositories/payments-repo.js';
import { unlockNow, readUnlockState } from '../repositories/unlock-repo.js';
import { asIs, compensatePayment, completePayment, runPayment, type Paid, type PaymentTools } from './runner.js';
import type { SpendCheck } from './steps/record-payment.js';

/** The price of skipping `remainingSeconds` of a timer: ceil(remaining minutes × per_minute), at least 1. */
export function skipPrice(remainingSeconds: number, perMinute: number): number {
  return Math.max(1, Math.ceil(Number(((remainingSeconds / 60) * perMinute).toPrecision(12))));
}

/** Thrown inside the skip's transaction when the chest can no longer be unlocked by it. */
class NothingToUnlock extends Error {}

/** How long a skip waits for another skip of the same chest being paid (a wallet call), and how often it looks. */
const SKIP_WAIT_MS = 10_000;
const SKIP_POLL_MS = 25;
/** How often a skip starts over after waiting for another one (which then failed: no funds, or a crash). */
const SKIP_ATTEMPTS = 5;

/**
 * The skip saga: skips a chest's timer for currency (a payment of kind `skip`, run by the payment
 * runner with no effect step): the compliance gate (a paid skip currency is a
 * paid way to random content), then the price (ceil(remaining minutes × per_minute), the whole
 * timer when it has not started) is recorded and debited in the wallet (`unlock:<debit id>`),
 * then the chest is unlocked and the debit completed in one transaction. An unlocked chest costs
 * nothing.
 *
 * Concurrent skips of one chest debit once: recording the debit claims the chest (at most one skip
 * debit of a chest is pending or completed, a unique index), so a second skip's record fails
 * before the wallet is asked. That skip waits until the first settles and starts over: the chest
 * is unlocked (answered as it is, nothing charged), or the first failed and this one may pay. If
 * the chest can no longer be unlocked by a paid skip (its timer ended, or it was opened), the
 * amount is refunded. A crash between the steps is settled by the payments sweeper (refund).
 */
export async function skipUnlock(t: PaymentTools & GateDeps, cmd: UnlockCommand & { skipWith: string }, ctx: CallContext): Promise<UnlockOutcome> {
  let gated = false;
  let spend: SpendCheck | undefined;
  for (let attempt = 1; attempt <= SKIP_ATTEMPTS; attempt++) {
    const state = checkedUnlock(await readUnlockState(t.pool, cmd.appId, cmd.chestId), cmd);
    const skip = state.unlock.skip;
    if (!skip) throw chestErrors.unlockSkipUnavailable();
    if (cmd.skipWith !== skip.currency) throw chestErrors.skipCurrencyMismatch(skip.currency);
    if (state.remainingSeconds !== null && state.remainingSeconds <= 0) return { chest: await chestNow(t, cmd) };
    if (!gated) {
      spend = await checkPaidUseNow(t, cmd.appId, skip.currency, 'skip', ctx);
      gated = true;
    }

    const amount = skipPrice(state.remainingSeconds ?? state.unlock.seconds, skip.per_minute);
    const payment = {
      kind: 'skip' as const,
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestId: cmd.chestId,
      currency: skip.currency,
      amount: String(amount),
    };
    const refused = (e: AppError) => (e.code === 'insufficient_funds' ? keyErrors.skipInsufficientFunds(skip.currency, amount, e) : e);
    let paid: Paid;
    try {
      paid = await runPayment(t, { payment, spend, refused, interrupted: asIs }, ctx);
    } catch (err) {
      if (!isUniqueViolation(err, ONE_SKIP_PER_CHEST)) throw err;
      // Another skip of this chest holds the claim: nothing was debited here. Wait for it, read again.
      await settled(t, cmd);
      continue;
    }
    try {
      await withTransaction(t.pool, async (tx) => {
        // A sweeper that found the debit stale has refunded it: then this unlock must not happen.
        if (!(await completePayment(tx, paid.payment))) throw chestErrors.unlockInterrupted();
        if (!(await unlockNow(tx, cmd.appId, cmd.chestId))) throw new NothingToUnlock();
      });
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'unlock_interrupted')) await compensatePayment(t, paid.payment, ['debited'], ctx);
      if (err instanceof NothingToUnlock) return { chest: await chestNow(t, cmd) };
      throw err;
    }
    return { chest: await chestNow(t, cmd), charged: { currency: skip.currency, amount, balance: paid.balance } };
  }
  throw chestErrors.unlockSkipInProgress();
}

/** Waits (bounded) until no skip of the chest is being paid; 409 unlock_skip_in_progress past SKIP_WAIT_MS. */
async function settled(t: PaymentTools, cmd: UnlockCommand): Promise<void> {
  const deadline = Date.now() + SKIP_WAIT_MS;
  while (await skipBeingPaid(t.pool, cmd.appId, cmd.chestId)) {
    if (Date.now() >= deadline) throw chestErrors.unlockSkipInProgress();
    await sleep(SKIP_POLL_MS);
  }
}

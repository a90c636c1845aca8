import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, isUniqueViolation, withTransaction, type CallContext, type InventoryChestView } from '@ccs/shared';
import { checkPaidUseNow, type GateDeps } from '../compliance/gate.js';
import type { SpendCheck } from '../saga/steps/reserve-spend.js';
import { chestErrors, keyErrors } from '../errors.js';
import { ONE_SKIP_PER_CHEST, skipBeingPaid } from '../repositories/payments-repo.js';
import type { Paid } from '../saga/runner.js';
import { findUnopened } from '../repositories/inventory-repo.js';
import { lockPlayerUnlocks, readUnlockState, runningTimers, startTimer, unlockNow, type UnlockState } from '../repositories/unlock-repo.js';
import { completeChestDebit, refundChestDebit, takeChestDebit, type DebitTools } from './chest-debit-saga.js';

/** What a skip needs: the debit saga's tools and what the compliance gate reads. */
export type SkipTools = DebitTools & GateDeps;

/** Who unlocks which chest, and whether by paying to skip the timer. */
export interface UnlockCommand {
  appId: string;
  playerId: string;
  chestId: string;
  /** The currency to skip the timer with; absent: start the timer. */
  skipWith?: string;
}

/** The chest after the call, and what a skip charged. */
export interface UnlockOutcome {
  chest: InventoryChestView;
  charged?: { currency: string; amount: number; balance: string };
}

/** The price of skipping `remainingSeconds` of a timer: ceil(remaining minutes × per_minute), at least 1. */
export function skipPrice(remainingSeconds: number, perMinute: number): number {
  return Math.max(1, Math.ceil(Number(((remainingSeconds / 60) * perMinute).toPrecision(12))));
}

/** Thrown inside the skip's transaction when the chest can no longer be unlocked by it. */
class NothingToUnlock extends Error {}

/** The chest as the inventory shows it now (it exists: the caller owns it and it is unopened). */
async function current(t: DebitTools, cmd: UnlockCommand): Promise<InventoryChestView> {
  const chest = await findUnopened(t.pool, cmd.appId, cmd.playerId, cmd.chestId);
  if (!chest) throw chestErrors.chestAlreadyOpened();
  return chest;
}

/** The checks every unlock makes: the chest exists, is the caller's, unopened and time-locked. */
function checked(state: UnlockState | undefined, cmd: UnlockCommand): UnlockState & { unlock: NonNullable<UnlockState['unlock']> } {
  if (!state) throw chestErrors.chestNotFound();
  if (state.playerId !== cmd.playerId) throw chestErrors.chestNotOwned();
  if (state.opened) throw chestErrors.chestAlreadyOpened();
  if (!state.unlock) throw chestErrors.chestNotTimeLocked();
  return state as UnlockState & { unlock: NonNullable<UnlockState['unlock']> };
}

/**
 * Starts a chest's timer (docs/content.md, "Time-locked chests"), in one transaction under the
 * player's unlock lock: at most `unlock_slots` timers run at once (409 unlock_slot_busy past
 * them). A timer already running, or a chest already unlocked, is answered as it is: a retry
 * changes nothing.
 */
export async function startUnlock(t: DebitTools, cmd: UnlockCommand): Promise<UnlockOutcome> {
  await withTransaction(t.pool, async (tx) => {
    await lockPlayerUnlocks(tx, cmd.appId, cmd.playerId);
    const state = checked(await readUnlockState(tx, cmd.appId, cmd.chestId), cmd);
    if (state.unlocksAt) return;
    const running = await runningTimers(tx, cmd.appId, cmd.playerId);
    if (running.count >= state.slots) throw chestErrors.unlockSlotBusy(state.slots, running.nextEnd);
    await startTimer(tx, cmd.appId, cmd.chestId, state.unlock.seconds);
  });
  return { chest: await current(t, cmd) };
}

/** How long a skip waits for another skip of the same chest being paid (a wallet call), and how often it looks. */
const SKIP_WAIT_MS = 10_000;
const SKIP_POLL_MS = 25;
/** How often a skip starts over after waiting for another one (which then failed: no funds, or a crash). */
const SKIP_ATTEMPTS = 5;

/**
 * Skips a chest's timer for currency, as a saga: the compliance gate (a paid skip currency is a
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
export async function skipUnlock(t: SkipTools, cmd: UnlockCommand & { skipWith: string }, ctx: CallContext): Promise<UnlockOutcome> {
  let gated = false;
  let spend: SpendCheck | undefined;
  for (let attempt = 1; attempt <= SKIP_ATTEMPTS; attempt++) {
    const state = checked(await readUnlockState(t.pool, cmd.appId, cmd.chestId), cmd);
    const skip = state.unlock.skip;
    if (!skip) throw chestErrors.unlockSkipUnavailable();
    if (cmd.skipWith !== skip.currency) throw chestErrors.skipCurrencyMismatch(skip.currency);
    if (state.remainingSeconds !== null && state.remainingSeconds <= 0) return { chest: await current(t, cmd) };
    if (!gated) {
      spend = await checkPaidUseNow(t, cmd.appId, skip.currency, 'skip', ctx);
      gated = true;
    }

    const amount = skipPrice(state.remainingSeconds ?? state.unlock.seconds, skip.per_minute);
    const debit = {
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestId: cmd.chestId,
      currency: skip.currency,
      amount,
      kind: 'skip' as const,
      spend,
    };
    let paid: Paid;
    try {
      paid = await takeChestDebit(t, debit, ctx, (e) =>
        e.code === 'insufficient_funds' ? keyErrors.skipInsufficientFunds(skip.currency, amount, e) : e,
      );
    } catch (err) {
      if (!isUniqueViolation(err, ONE_SKIP_PER_CHEST)) throw err;
      // Another skip of this chest holds the claim: nothing was debited here. Wait for it, read again.
      await settled(t, cmd);
      continue;
    }
    try {
      await withTransaction(t.pool, async (tx) => {
        // A sweeper that found the debit stale has refunded it: then this unlock must not happen.
        if (!(await completeChestDebit(tx, paid.payment))) throw chestErrors.unlockInterrupted();
        if (!(await unlockNow(tx, cmd.appId, cmd.chestId))) throw new NothingToUnlock();
      });
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'unlock_interrupted')) await refundChestDebit(t, paid.payment, ctx);
      if (err instanceof NothingToUnlock) return { chest: await current(t, cmd) };
      throw err;
    }
    return { chest: await current(t, cmd), charged: { currency: skip.currency, amount, balance: paid.balance } };
  }
  throw chestErrors.unlockSkipInProgress();
}

/** Waits (bounded) until no skip of the chest is being paid; 409 unlock_skip_in_progress past SKIP_WAIT_MS. */
async function settled(t: SkipTools, cmd: UnlockCommand): Promise<void> {
  const deadline = Date.now() + SKIP_WAIT_MS;
  while (await skipBeingPaid(t.pool, cmd.appId, cmd.chestId)) {
    if (Date.now() >= deadline) throw chestErrors.unlockSkipInProgress();
    await sleep(SKIP_POLL_MS);
  }
}

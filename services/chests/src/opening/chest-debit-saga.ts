import { AppError, type Bus, type CallContext, type Logger, type Pool } from '@ccs/shared';
import { debitReference, insertChestDebit, moveChestDebit, type DebitPurpose } from '../repositories/chest-debits-repo.js';
import { compensateStep, runStep } from '../saga/runner.js';
import { debitWallet } from '../saga/steps/debit-wallet.js';
import { keyErrors } from '../errors.js';

/** What the chest-debit sagas (keys, timer skips) need from the service. */
export interface DebitTools {
  pool: Pool;
  bus: Bus;
  log: Logger;
}

/** A payment for a chest's use: who pays what, for which chest, and why. */
export interface ChestDebit {
  appId: string;
  playerId: string;
  chestId: string;
  currency: string;
  amount: number;
  purpose: DebitPurpose;
}

/**
 * Step 1 of a chest-debit saga: records the debit (`pending`, so a crash from here on is settled
 * by the chest-debit sweeper), then runs the `debit-wallet` step (saga/steps/debit-wallet.ts, reference `key:<id>` or
 * `unlock:<id>`). Too low a balance → what `refused(walletError)` returns is thrown, nothing kept.
 * A wallet that does not answer leaves the record pending: the sweeper refunds it, or voids the
 * reference if the debit never happened. Returns the debit's id and the balance after it.
 */
export async function takeChestDebit(
  t: DebitTools,
  d: ChestDebit,
  ctx: CallContext,
  refused: (walletError: AppError) => AppError,
): Promise<{ id: string; balance: string }> {
  const id = await insertChestDebit(t.pool, d);
  const debit = { playerId: d.playerId, currency: d.currency, amount: String(d.amount), reference: debitReference(d.purpose, id) };
  const r = await runStep(debitWallet(t.bus), debit, ctx);
  if (r.ok) return { id, balance: r.value.balance };
  // A refusal for funds settles the record; any other failure leaves it pending for the sweeper.
  if (r.kind === 'permanent' && r.error instanceof AppError && r.error.code === 'insufficient_funds') {
    await moveChestDebit(t.pool, id, ['pending'], 'refunded');
    throw refused(r.error);
  }
  throw r.error;
}

/**
 * Compensation: the effect the debit paid for cannot happen, so the amount goes back. The record
 * moves to `refunding` first (the sweeper retries from there if the wallet is away), then
 * `refunded`. A debit completed or refunded already is left alone.
 */
export async function refundChestDebit(t: DebitTools, purpose: DebitPurpose, id: string, ctx: CallContext): Promise<void> {
  if (!(await moveChestDebit(t.pool, id, ['pending'], 'refunding'))) return;
  try {
    await compensateStep(debitWallet(t.bus), { reference: debitReference(purpose, id) }, ctx);
    await moveChestDebit(t.pool, id, ['refunding'], 'refunded');
  } catch (err) {
    t.log.warn({ err: String(err), chestDebit: id, purpose }, 'refund of a chest debit failed; the chest-debit sweeper will retry');
  }
}

/** The key saga's first step: the chest's key, debited; no key → 409 `key_required`. */
export const debitKey = async (t: DebitTools, d: Omit<ChestDebit, 'purpose'>, ctx: CallContext): Promise<string> =>
  (await takeChestDebit(t, { ...d, purpose: 'key' }, ctx, () => keyErrors.keyRequired(d))).id;

/** The key saga's compensation. */
export const refundKey = (t: DebitTools, id: string, ctx: CallContext): Promise<void> => refundChestDebit(t, 'key', id, ctx);

import type { AppError, CallContext, Queryable } from '@ccs/shared';
import type { PaymentRef } from '../repositories/payments-repo.js';
import { asIs, compensatePayment, completePayment, runPayment, type Paid, type SagaTools } from '../saga/runner.js';
import { keyErrors } from '../errors.js';
import type { SpendCheck } from '../saga/steps/reserve-spend.js';

/** What the chest-debit sagas (keys, timer skips) need from the service: the payment runner's tools. */
export type DebitTools = SagaTools;

/** A payment for a chest's use: who pays what, for which chest, and why. */
export interface ChestDebit {
  appId: string;
  playerId: string;
  chestId: string;
  currency: string;
  amount: number;
  kind: 'key' | 'skip';
  /** The spend limits the player is held to (the compliance gate's answer): the record reserves the amount under them. */
  spend?: SpendCheck;
}

/**
 * The debit of a chest-debit saga, run by the payment runner (saga/runner.ts) with no effect step:
 * the payment recorded `pending` (a crash from here on is settled by the payments sweeper), then
 * the `debit-wallet` step (reference `key:<id>` or `unlock:<id>`). A refusal → what
 * `refused(walletError)` returns is thrown, the payment `failed`. A wallet that does not answer →
 * the debit is compensated (or left to the sweeper) and its error thrown. Returns the debited
 * payment and the balance after it; the caller completes it in its effect's transaction
 * (`completeChestDebit`) or refunds it (`refundChestDebit`).
 */
export function takeChestDebit(t: DebitTools, d: ChestDebit, ctx: CallContext, refused?: (walletError: AppError) => Error): Promise<Paid> {
  const payment = { kind: d.kind, appId: d.appId, playerId: d.playerId, chestId: d.chestId, currency: d.currency, amount: String(d.amount) };
  return runPayment(t, { payment, spend: d.spend, refused, interrupted: asIs }, ctx);
}

/** In the effect's transaction: the debit → `completed`; false when the sweeper claimed it (the effect must not happen). */
export const completeChestDebit = (tx: Queryable, payment: PaymentRef): Promise<boolean> => completePayment(tx, payment);

/**
 * Compensation: the effect the debit paid for cannot happen, so the amount goes back (the payment
 * `debited` → `compensating` → `refunded`; the sweeper retries if the wallet is away). A debit
 * completed or settled already is left alone.
 */
export const refundChestDebit = (t: DebitTools, payment: PaymentRef, ctx: CallContext): Promise<void> =>
  compensatePayment(t, payment, ['debited'], ctx);

/** The key saga's debit: the chest's key; no key (too low a balance) → 409 `key_required`. */
export const debitKey = async (t: DebitTools, d: Omit<ChestDebit, 'kind'>, ctx: CallContext): Promise<PaymentRef> =>
  (await takeChestDebit(t, { ...d, kind: 'key' }, ctx, (e) => (e.code === 'insufficient_funds' ? keyErrors.keyRequired(d, e) : e))).payment;

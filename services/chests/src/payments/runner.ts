import { randomUUID } from 'node:crypto';
import {
  AppError,
  compensateStep,
  recordSagaOutcome,
  runStep,
  type Bus,
  type CallContext,
  type Logger,
  type PlannedStep,
  type Pool,
} from '@ccs/shared';
import { paymentReference, transitionPayment, type NewPayment, type PaymentRef, type PaymentStatus } from '../repositories/payments-repo.js';
import { debitWallet } from './steps/debit-wallet.js';
import { recordPayment, type SpendCheck } from './steps/record-payment.js';

/** What the runner needs from the service. */
export interface PaymentTools {
  pool: Pool;
  bus: Bus;
  log: Logger;
}

/** A debited payment: its record, and the player's balance after the debit. */
export interface Paid {
  payment: PaymentRef;
  balance: string;
}

/**
 * A payment saga as a list of steps for the runner: `checks` (nothing to compensate), then the
 * payment recorded `pending` and the `debit-wallet` step under its reference, then `effect` (a step
 * that completes the payment in its own transaction). A saga without an effect (keys, skips)
 * completes the payment in its caller's transaction (`completePayment`), or compensates it.
 */
export interface PaymentSaga<Effect> {
  payment: NewPayment;
  /** The spend limits the payment is held to (the compliance gate's answer): its record reserves the amount under them. */
  spend?: SpendCheck;
  checks?: PlannedStep<unknown>[];
  effect?: (paid: Paid) => PlannedStep<Effect>;
  /** What a refusal of the debit (a permanent failure) is answered with; the wallet's error by default. */
  refused?: (walletError: AppError) => Error;
  /** What a debit that may have happened, or an effect that failed unexpectedly, is answered with once compensated. */
  interrupted: (error: unknown) => Error;
}

/** The error as it is (a saga whose interruptions answer the wallet's own 503/504). */
export const asIs = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * Runs a payment saga: the checks, the record (which reserves the amount under the player's spend
 * limits, the `record-payment` step), the debit (a refusal settles the payment `failed`;
 * no answer compensates it now, or leaves it to the sweeper), then the effect (its failure
 * compensates the debit). The record's insert fails as it is (a unique index: the caller's
 * conflict). Returns the payment, the balance and the effect's output.
 */
export async function runPayment<Effect>(t: PaymentTools, saga: PaymentSaga<Effect>, ctx: CallContext): Promise<Paid & { effect?: Effect }> {
  for (const check of saga.checks ?? []) await check.invoke(ctx);
  const payment: PaymentRef = { id: randomUUID(), appId: saga.payment.appId, kind: saga.payment.kind };
  // The record is the spend reservation too (403 spend_limit_reached past a limit, nothing recorded).
  await recordPayment(t.pool).invoke({ id: payment.id, payment: saga.payment, spend: saga.spend }, ctx);
  const p = saga.payment;
  const debit = await runStep(
    debitWallet(t.bus),
    { playerId: p.playerId, currency: p.currency, amount: p.amount, reference: paymentReference(payment) },
    ctx,
  );
  if (!debit.ok && debit.kind === 'permanent') {
    await transitionPayment(t.pool, payment, ['pending'], 'failed', debit.error instanceof AppError ? debit.error.code : undefined);
    outcome(payment, 'failed');
    throw debit.error instanceof AppError && saga.refused ? saga.refused(debit.error) : debit.error;
  }
  if (!debit.ok) {
    // No answer: the debit may have happened. Refund now, or leave it to the sweeper.
    await compensatePayment(t, payment, ['pending'], ctx);
    throw saga.interrupted(debit.error);
  }
  // When the sweeper claimed the payment meanwhile this moves nothing, and the effect's conditional completion refuses (503 *_interrupted).
  await transitionPayment(t.pool, payment, ['pending'], 'debited');
  const paid = { payment, balance: debit.value.balance };
  if (!saga.effect) return paid;
  const effect = saga.effect(paid);
  const done = await runStep({ invoke: (_: void, c: CallContext) => effect.invoke(c) }, undefined, ctx);
  if (!done.ok) {
    await compensatePayment(t, payment, ['debited'], ctx);
    if (done.error instanceof AppError) throw done.error;
    t.log.error({ err: done.error, payment: payment.id, kind: payment.kind }, 'payment effect failed; debit refunded');
    throw saga.interrupted(done.error);
  }
  outcome(payment, 'completed');
  return { ...paid, effect: done.value };
}

/** In the effect's transaction: the debited payment → `completed`; false when it is not debited any more (the sweeper claimed it). */
export const completePayment = (tx: Parameters<typeof transitionPayment>[0], payment: PaymentRef): Promise<boolean> =>
  transitionPayment(tx, payment, ['debited'], 'completed');

/**
 * Compensation of the debit: the payment `from` → `compensating` (a no-op when it is in neither:
 * completed, or settled already), then `settleCompensation`. If the wallet cannot be reached the
 * payment stays `compensating`, for the sweeper.
 */
export async function compensatePayment(t: PaymentTools, payment: PaymentRef, from: PaymentStatus[], ctx: CallContext): Promise<void> {
  if (!(await transitionPayment(t.pool, payment, from, 'compensating'))) return;
  try {
    await settleCompensation(t, payment, ctx);
  } catch (err) {
    t.log.warn({ err: String(err), payment: payment.id, kind: payment.kind }, 'refund failed; the payments sweeper will retry it');
  }
}

/**
 * The `debit-wallet` step's compensation for a `compensating` payment, given only its reference:
 * `refunded`, or `failed` when nothing had been debited (the reference is now void). Throws when
 * the wallet cannot be reached.
 */
export async function settleCompensation(t: PaymentTools, payment: PaymentRef, ctx: CallContext, failure?: string): Promise<'refunded' | 'failed'> {
  const undone = await compensateStep(debitWallet(t.bus), { reference: paymentReference(payment) }, ctx);
  const to = undone === 'refunded' ? 'refunded' : 'failed';
  await transitionPayment(t.pool, payment, ['compensating'], to, failure);
  outcome(payment, to === 'refunded' ? 'compensated' : 'failed');
  return to;
}

/** Counts the outcome of a purchase (`ccs_saga_outcomes_total`, saga `purchase`). */
function outcome(payment: PaymentRef, what: 'completed' | 'compensated' | 'failed'): void {
  if (payment.kind === 'purchase') recordSagaOutcome('purchase', what);
}

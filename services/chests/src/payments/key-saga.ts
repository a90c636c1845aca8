import type { AppError, CallContext, Queryable } from '@ccs/shared';
import { checkPaidUseNow, type GateDeps } from '../compliance/gate.js';
import type { RequiredKey } from '../repositories/chest-mechanics-repo.js';
import type { PaymentRef } from '../repositories/payments-repo.js';
import { keyErrors } from '../errors.js';
import type { Pointer } from '../opening/pointer.js';
import { asIs, compensatePayment, completePayment, runPayment, type PaymentTools } from './runner.js';
import { checkSpendFits, type SpendCheck } from './steps/record-payment.js';

/** A chest of an opening that needs a key, at its place in the request. */
export interface KeyedChest {
  index: number;
  chestId: string;
  requiresKey: RequiredKey;
}

/**
 * The key saga: the keys of one opening's key-required chests (docs/architecture.md,
 * "Key-required opening"). Each chest's key is its own payment (kind `key`), run by the payment
 * runner with no effect step: recorded `pending` (a crash from there on is settled by the
 * payments sweeper), then the `debit-wallet` step (reference `key:<id>`); taken once and kept
 * across the opening's retries; completed in the opening's transaction, or refunded when the
 * opening does not happen.
 */
export class ChestKeys {
  /** Key payments by chest id, in the order taken. */
  private readonly taken = new Map<string, PaymentRef>();

  constructor(
    private readonly tools: PaymentTools & GateDeps,
    private readonly cmd: { appId: string; playerId: string },
    private readonly ctx: CallContext,
    private readonly point: Pointer,
  ) {}

  /** Whether any key was taken (the opening then writes in a transaction that completes them). */
  get any(): boolean {
    return this.taken.size > 0;
  }

  /**
   * Takes the keys not taken yet: first the compliance gate of every paid key, and the spend limits
   * against the cost of all of them (nothing is debited when one is refused), then one debit per
   * chest (no key → 409 `key_required`, naming the chest), each reserved under the spend limits.
   */
  async take(chests: KeyedChest[]): Promise<void> {
    const due = chests.filter((c) => !this.taken.has(c.chestId));
    // One gate question per key currency (the answer is the player's, not the chest's), pointed at its first chest.
    const firstByCurrency = new Map<string, KeyedChest>();
    for (const c of due) if (!firstByCurrency.has(c.requiresKey.currency)) firstByCurrency.set(c.requiresKey.currency, c);
    const spendBy = new Map<string, SpendCheck>();
    for (const [currency, c] of firstByCurrency) {
      const spend = await this.point(c.index, () => checkPaidUseNow(this.tools, this.cmd.appId, currency, 'key', this.ctx));
      if (spend) spendBy.set(currency, spend);
    }
    // The whole batch's limited cost, before its first debit (each debit reserves its own amount again under the lock).
    const limited = due.filter((c) => spendBy.has(c.requiresKey.currency));
    if (limited.length) {
      const total = limited.reduce((sum, c) => sum + c.requiresKey.amount, 0);
      await this.point(limited[0]!.index, () => checkSpendFits(this.tools.pool, this.cmd, spendBy.get(limited[0]!.requiresKey.currency)!, total));
    }
    for (const c of due) this.taken.set(c.chestId, await this.point(c.index, () => this.debit(c, spendBy.get(c.requiresKey.currency))));
  }

  /**
   * In the opening's transaction: every debit debited → completed. One that is not debited any
   * more (a sweeper found it stale and refunds it) → 503 `opening_interrupted`: no opening.
   */
  async complete(tx: Queryable): Promise<void> {
    for (const key of this.taken.values()) if (!(await completePayment(tx, key))) throw keyErrors.interrupted();
  }

  /** The opening did not happen: every key goes back (a no-op for one completed or refunded already). */
  async refund(): Promise<void> {
    for (const key of this.taken.values()) await compensatePayment(this.tools, key, ['debited'], this.ctx);
  }

  /** One chest's key debited, reserved under the spend limits; too low a balance → 409 `key_required`. */
  private async debit(c: KeyedChest, spend: SpendCheck | undefined): Promise<PaymentRef> {
    const { appId, playerId } = this.cmd;
    const { currency, amount } = c.requiresKey;
    const payment = { kind: 'key' as const, appId, playerId, chestId: c.chestId, currency, amount: String(amount) };
    const refused = (e: AppError) => (e.code === 'insufficient_funds' ? keyErrors.keyRequired({ currency, amount }, e) : e);
    return (await runPayment(this.tools, { payment, spend, refused, interrupted: asIs }, this.ctx)).payment;
  }
}

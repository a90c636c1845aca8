import { DebitCurrency, RefundDebit, type Bus, type ReplyOf, type SagaStep } from '@ccs/shared';

/** What a wallet debit needs: who pays what, and the reference that names this debit in the wallet. */
export interface WalletDebit {
  playerId: string;
  currency: string;
  amount: string;
  /** The payment's reference (payments-repo.ts `paymentReference`): a purchase id, `key:<id>` or `unlock:<id>`. */
  reference: string;
}

/** How the compensation ended: the amount went back, or nothing had been debited (the reference is now void). */
export type RefundOutcome = 'refunded' | 'nothing_debited';

/**
 * The step shared by every payment of the chests service (purchases, keys, timer skips): takes
 * the amount from the player's balance; its compensation, given only the reference, refunds
 * exactly that debit. The wallet makes both idempotent on the reference, so compensating a debit
 * that never happened is a no-op that voids the reference.
 */
export function debitWallet(bus: Bus): SagaStep<WalletDebit, ReplyOf<typeof DebitCurrency>, { reference: string }, RefundOutcome> {
  return {
    id: 'debit-wallet',
    invoke: (d, ctx) => bus.request(DebitCurrency, { playerId: d.playerId, currency: d.currency, amount: d.amount, reference: d.reference }, ctx),
    async compensate({ reference }, ctx) {
      const r = await bus.request(RefundDebit, { reference }, ctx);
      return r.outcome === 'unknown_reference' ? 'nothing_debited' : 'refunded';
    },
  };
}

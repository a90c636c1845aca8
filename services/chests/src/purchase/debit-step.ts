import { DebitCurrency, RefundDebit, type Bus, type CallContext, type ReplyOf } from '@ccs/shared';

/** What the debit step needs: the purchase id is the debit's reference in the wallet. */
export interface DebitInput {
  purchaseId: string;
  playerId: string;
  currency: string;
  amount: string;
}

/**
 * Saga step 2: takes the price from the player's balance (409 insufficient_funds). Its
 * compensation refunds exactly that debit; the wallet makes both idempotent on the reference, so
 * compensating a debit that never happened is a no-op.
 */
export const debitStep = {
  id: 'debit-wallet',
  invoke(bus: Bus, input: DebitInput, ctx: CallContext): Promise<ReplyOf<typeof DebitCurrency>> {
    return bus.request(DebitCurrency, { playerId: input.playerId, currency: input.currency, amount: input.amount, reference: input.purchaseId }, ctx);
  },
  async compensate(bus: Bus, purchaseId: string, ctx: CallContext): Promise<'refunded' | 'nothing_debited'> {
    const r = await bus.request(RefundDebit, { reference: purchaseId }, ctx);
    return r.outcome === 'unknown_reference' ? 'nothing_debited' : 'refunded';
  },
};

import { DebitCurrency, RefundDebit, type Bus, type ReplyOf, type SagaStep } from '@ccs/shared';

/** A trade's token charge: who pays how many tokens of which currency, under which reference. */
export interface TokenDebit {
  playerId: string;
  currency: string;
  amount: number;
  reference: string;
}

/** The wallet reference of an offer's tokens. */
export const offerReference = (tradeId: string) => `trade:${tradeId.toLowerCase()}:offer`;
/** The wallet reference of the `attempt`-th accept's tokens (a given-up accept's is refunded, a later one has its own). */
export const acceptReference = (tradeId: string, attempt: number) => `trade:${tradeId.toLowerCase()}:accept:${attempt}`;

/**
 * The `debit-tokens` step of the trade saga: takes the tokens from the player's balance in the
 * wallet (409 insufficient_funds, a refusal: nothing taken); its compensation, given only the
 * reference, refunds exactly that debit, or voids the reference when it was never debited (a debit
 * arriving after that is refused), so it can be called whatever happened.
 */
export function debitTokens(bus: Bus): SagaStep<TokenDebit, ReplyOf<typeof DebitCurrency>, { reference: string }, 'refunded' | 'nothing_debited'> {
  return {
    id: 'debit-tokens',
    invoke: (d, ctx) =>
      bus.request(DebitCurrency, { playerId: d.playerId, currency: d.currency, amount: String(d.amount), reference: d.reference }, ctx),
    async compensate({ reference }, ctx) {
      const r = await bus.request(RefundDebit, { reference }, ctx);
      return r.outcome === 'unknown_reference' ? 'nothing_debited' : 'refunded';
    },
  };
}

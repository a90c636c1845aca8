import { endpoint, RefundDebit, withTransaction, type Pool } from '@ccs/shared';
import { appOf } from '../call-context.js';
import { addToBalance } from '../repositories/balances-repo.js';
import { findDebit, markRefunded } from '../repositories/debits-repo.js';

/**
 * wallet.v1.refund (a purchase's compensation): credits back exactly the debit with this
 * reference, once. A repeat, or a reference never debited, is a no-op that says so.
 */
export function refundEndpoint(pool: Pool) {
  return endpoint(RefundDebit, async (req, ctx) => {
    const appId = appOf(ctx);
    return withTransaction(pool, async (tx) => {
      const debit = await markRefunded(tx, appId, req.reference);
      if (!debit) {
        const known = await findDebit(tx, appId, req.reference);
        return { outcome: known ? ('already_refunded' as const) : ('unknown_reference' as const) };
      }
      const balance = await addToBalance(tx, {
        appId,
        playerId: debit.playerId,
        currencyId: debit.currencyId,
        amount: debit.amount,
        reason: 'debit_refund',
        reference: req.reference,
        requestId: ctx.requestId,
      });
      return { outcome: 'refunded' as const, balance };
    });
  });
}

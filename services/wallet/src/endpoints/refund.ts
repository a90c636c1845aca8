import { appOf, endpoint, RefundDebit, withTransaction, type OutboxRelay, type Pool, type WebhookInterestCache } from '@ccs/shared';
import { addToBalance } from '../repositories/balances-repo.js';
import { findDebit, lockReference, markRefunded, voidReference } from '../repositories/debits-repo.js';

/**
 * wallet.v1.refund (a purchase's compensation): credits back exactly the debit with this
 * reference, once. A repeat is a no-op that says so; a reference never debited is voided, so a
 * debit that arrives late (after its purchase was given up) is refused and no money is lost.
 */
export function refundEndpoint(pool: Pool, relay: OutboxRelay, interest?: WebhookInterestCache) {
  return endpoint(RefundDebit, async (req, ctx) => {
    const appId = appOf(ctx);
    const emitEvent = interest ? await interest.wants(appId, 'currency.credited', ctx.requestId) : true;
    const r = await withTransaction(pool, async (tx) => {
      await lockReference(tx, appId, req.reference);
      const debit = await markRefunded(tx, appId, req.reference);
      if (!debit) {
        if (await findDebit(tx, appId, req.reference)) return { outcome: 'already_refunded' as const };
        await voidReference(tx, appId, req.reference);
        return { outcome: 'unknown_reference' as const };
      }
      const credited = await addToBalance(tx, {
        appId,
        playerId: debit.playerId,
        currencyId: debit.currencyId,
        amount: debit.amount,
        reason: 'debit_refund',
        reference: req.reference,
        requestId: ctx.requestId,
        emitEvent,
      });
      return { outcome: 'refunded' as const, balance: credited.balance, events: credited.events };
    });
    // The refund's currency.credited event goes out now (the relay publishes it otherwise).
    if (r.outcome === 'refunded') {
      void relay.publishNow(r.events).catch(() => undefined);
      return { outcome: r.outcome, balance: r.balance };
    }
    return r;
  });
}

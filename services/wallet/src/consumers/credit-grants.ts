import { consumer, markProcessed, WalletCreditGrant, withTransaction, type Pool } from '@ccs/shared';
import { addToBalance, sumByCurrency } from '../repositories/balances-repo.js';
import { currencyIdsByCode } from '../repositories/currencies-repo.js';

/** Durable name of the wallet's credit-grant consumer. */
export const CREDIT_GRANTS_CONSUMER = 'wallet-credit-grants';

/** Thrown (and so retried, then parked) when a grant names a currency the app does not have yet. */
export class UnknownCurrencyError extends Error {
  override name = 'UnknownCurrencyError';
}

/**
 * Applies a credit grant (registration's initial currency and welcome bonus, refunds): every
 * credit and the processed-message mark in one transaction, so a redelivery changes nothing.
 * A currency the app does not know yet fails the whole message; content may still be on its
 * way, and the runtime retries with backoff before parking it.
 */
export function creditGrantsConsumer(pool: Pool) {
  return consumer({
    durable: CREDIT_GRANTS_CONSUMER,
    event: WalletCreditGrant,
    maxDeliver: 10,
    async handle(grant, { messageId, ctx }) {
      await withTransaction(pool, async (tx) => {
        if (!(await markProcessed(tx, messageId, CREDIT_GRANTS_CONSUMER))) return;
        const totals = await sumByCurrency(tx, grant.credits);
        const ids = await currencyIdsByCode(tx, grant.appId, [...totals.keys()]);
        for (const [code, amount] of totals) {
          const currencyId = ids.get(code);
          if (!currencyId) throw new UnknownCurrencyError(`app ${grant.appId} has no currency "${code}"`);
          if (amount === '0.00') continue;
          await addToBalance(tx, {
            appId: grant.appId,
            playerId: grant.playerId,
            currencyId,
            amount,
            reason: grant.reason,
            reference: messageId,
            requestId: ctx.requestId,
          });
        }
      });
    },
  });
}

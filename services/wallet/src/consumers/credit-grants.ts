import {
  consumer,
  DURABLE,
  markProcessed,
  WalletCreditGrant,
  withTransaction,
  type OutboxMessage,
  type OutboxRelay,
  type Pool,
  type WebhookInterestCache,
} from '@ccs/shared';
import { addToBalance, addToBalanceOnce, sumByCurrency } from '../repositories/balances-repo.js';
import { currencyIdsByCode } from '../repositories/currencies-repo.js';

/** Durable name of the wallet's credit-grant consumer. */
export const CREDIT_GRANTS_CONSUMER = DURABLE.walletCreditGrants;

/** Thrown (and so retried, then parked) when a grant names a currency the app does not have yet. */
export class UnknownCurrencyError extends Error {
  override name = 'UnknownCurrencyError';
}

const isZero = (amount: string) => /^0+(\.0+)?$/.test(amount);

/**
 * Applies a credit grant (registration's initial currency and welcome bonus, refunds, duplicate
 * conversions): every credit and the processed-message mark in one transaction, so a redelivery
 * changes nothing. Credits without a reference are summed per currency into one ledger row
 * referenced by the message id; a credit with its own reference (a converted duplicate:
 * `opening:<id>:slot:<n>`) gets its own row, at most once per reference even if the same credit
 * came again under another message id. A currency the app does not know yet fails the whole
 * message; content may still be on its way, and the runtime retries with backoff before parking it.
 * Every ledger credit writes its `currency.credited` webhook event in the same statement.
 */
export function creditGrantsConsumer(pool: Pool, relay?: OutboxRelay, interest?: WebhookInterestCache) {
  return consumer({
    durable: CREDIT_GRANTS_CONSUMER,
    event: WalletCreditGrant,
    maxDeliver: 10,
    async handle(grant, { messageId, ctx }) {
      const events: OutboxMessage[] = [];
      const emitEvent = interest ? await interest.wants(grant.appId, 'currency.credited', ctx.requestId) : true;
      await withTransaction(pool, async (tx) => {
        if (!(await markProcessed(tx, messageId, CREDIT_GRANTS_CONSUMER))) return;
        const pooled = grant.credits.filter((c) => c.reference === undefined);
        const own = grant.credits.filter((c) => c.reference !== undefined && !isZero(c.amount));
        const totals = pooled.length ? await sumByCurrency(tx, pooled) : new Map<string, string>();
        const ids = await currencyIdsByCode(tx, grant.appId, [...new Set([...totals.keys(), ...own.map((c) => c.currency)])]);
        const idOf = (code: string) => {
          const currencyId = ids.get(code);
          if (!currencyId) throw new UnknownCurrencyError(`app ${grant.appId} has no currency "${code}"`);
          return currencyId;
        };
        const base = { appId: grant.appId, playerId: grant.playerId, reason: grant.reason, requestId: ctx.requestId, emitEvent };
        for (const [code, amount] of totals) {
          const currencyId = idOf(code);
          if (amount === '0.00') continue;
          events.push(...(await addToBalance(tx, { ...base, currencyId, amount, reference: messageId })).events);
        }
        for (const c of own) {
          const made = await addToBalanceOnce(tx, { ...base, currencyId: idOf(c.currency), amount: c.amount, reference: c.reference! });
          if (made) events.push(...made.events);
        }
      });
      // Each credit's currency.credited event, once the credits committed (the relay publishes them otherwise).
      void relay?.publishNow(events).catch(() => undefined);
    },
  });
}

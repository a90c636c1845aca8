import { consumer, DURABLE, WalletCreditGrant, type Delivery, type OutboxMessage, type OutboxRelay, type WebhookInterestCache } from '@ccs/shared';
import type { z } from 'zod';
import { addToBalance, addToBalanceOnce, sumCreditsPerCurrency } from '../repositories/balances-repo.js';
import { currencyIdsByCode } from '../repositories/currencies-repo.js';

/** Durable name of the wallet's credit-grant consumer. */
export const CREDIT_GRANTS_CONSUMER = DURABLE.walletCreditGrants;

/** Thrown (and so retried, then parked) when a grant names a currency the app does not have yet. */
export class UnknownCurrencyError extends Error {
  override name = 'UnknownCurrencyError';
}

const isZero = (amount: string) => /^0+(\.0+)?$/.test(amount);

type Grant = z.infer<typeof WalletCreditGrant.payload>;

/**
 * Applies credit grants (registration's initial currency and welcome bonus, refunds, duplicate
 * conversions): every grant pulled meanwhile in ONE transaction (the runtime's, which records
 * their message ids as processed in it), so a redelivery changes nothing. Credits without a
 * reference are summed per grant and currency into one ledger row referenced by the message id;
 * a credit with its own reference (a converted duplicate: `opening:<id>:slot:<n>`) gets its own
 * row, at most once per reference even if the same credit came again under another message id.
 * A currency the app does not know yet fails the batch; the runtime then applies its grants one
 * by one, and retries that one with backoff before parking it (content may still be on its way).
 * The batch costs one statement for the sums, one per app for the currency ids, and one per
 * credit (balance, ledger row and its `currency.credited` webhook event together); grants are
 * applied player by player in key order (concurrent batches lock balances in the same order).
 * The webhook events are published once the batch committed (the relay publishes them otherwise).
 */
// eslint-disable-next-line max-lines-per-function -- one batch read top to bottom: the sums, the currency ids per app, then each grant's credits
export function creditGrantsConsumer(relay?: OutboxRelay, interest?: WebhookInterestCache) {
  const written = new WeakMap<Delivery<Grant>, OutboxMessage[]>();
  return consumer({
    durable: CREDIT_GRANTS_CONSUMER,
    event: WalletCreditGrant,
    maxDeliver: 10,
    async applyBatch(tx, batch) {
      const ordered = [...batch].sort((a, b) => byPlayer(a.payload, b.payload));
      // The credits without a reference, summed per grant and currency in one statement.
      const sums = await sumCreditsPerCurrency(
        tx,
        ordered.map((d) => d.payload.credits.filter((c) => c.reference === undefined)),
      );
      const grants = ordered.map((d, i) => ({
        d,
        sums: sums[i]!,
        own: d.payload.credits.filter((c) => c.reference !== undefined && !isZero(c.amount)),
      }));

      // Per app: whether its endpoints take currency.credited, and the ids of the currencies the batch credits.
      const apps = new Map<string, { emit: boolean; codes: Set<string>; ids: Map<string, string> }>();
      for (const { d, sums, own } of grants) {
        const { appId } = d.payload;
        const app = apps.get(appId) ?? {
          emit: interest ? await interest.wants(appId, 'currency.credited', d.ctx.requestId) : true,
          codes: new Set<string>(),
          ids: new Map<string, string>(),
        };
        for (const code of sums.keys()) app.codes.add(code);
        for (const c of own) app.codes.add(c.currency);
        apps.set(appId, app);
      }
      for (const [appId, app] of apps) app.ids = await currencyIdsByCode(tx, appId, [...app.codes]);

      for (const { d, sums, own } of grants) {
        const { payload: grant, messageId, ctx } = d;
        const app = apps.get(grant.appId)!;
        const idOf = (code: string) => {
          const currencyId = app.ids.get(code);
          if (!currencyId) throw new UnknownCurrencyError(`app ${grant.appId} has no currency "${code}"`);
          return currencyId;
        };
        const base = { appId: grant.appId, playerId: grant.playerId, reason: grant.reason, requestId: ctx.requestId, emitEvent: app.emit };
        const events: OutboxMessage[] = [];
        const balances: Record<string, string> = {};
        for (const [code, amount] of sums) {
          const currencyId = idOf(code);
          if (amount === '0.00') continue;
          const made = await addToBalance(tx, { ...base, currencyId, amount, reference: messageId });
          events.push(...made.events);
          balances[code] = made.balance;
        }
        for (const c of own) {
          const made = await addToBalanceOnce(tx, { ...base, currencyId: idOf(c.currency), amount: c.amount, reference: c.reference! });
          if (!made) continue;
          events.push(...made.events);
          balances[c.currency] = made.balance;
        }
        if (events.length) written.set(d, events);
        // The waiting process (a store purchase's answer) learns the balances after the credits without asking again.
        d.notice = { balances };
      }
    },
    // Each credit's currency.credited event, once the credits committed (the relay publishes them otherwise).
    afterCommit(batch) {
      const events = batch.flatMap((d) => written.get(d) ?? []);
      if (events.length) void relay?.publishNow(events).catch(() => undefined);
    },
  });
}

const byPlayer = (a: Grant, b: Grant) =>
  a.appId < b.appId ? -1 : a.appId > b.appId ? 1 : a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0;

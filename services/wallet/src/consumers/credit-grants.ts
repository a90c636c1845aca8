import {
  consumer,
  DURABLE,
  WalletCreditGrant,
  type Delivery,
  type OutboxMessage,
  type OutboxRelay,
  type Pool,
  type Queryable,
  type WebhookInterestCache,
} from '@ccs/shared';
import type { z } from 'zod';
import { addToBalance, addToBalanceOnce } from '../repositories/balances-repo.js';
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
 * The pooled credits (those without a reference) of every grant of a batch, summed per grant and
 * currency in one statement (numeric sums, rounded to the column's 2 decimals), each grant's
 * currencies in their first order. Index = the grant's place in `grants`.
 */
async function pooledTotals(q: Queryable, grants: Grant[]): Promise<Map<string, string>[]> {
  const rows = grants.flatMap((g, i) => g.credits.filter((c) => c.reference === undefined).map((c) => ({ i, ...c })));
  const totals = grants.map(() => new Map<string, string>());
  if (rows.length === 0) return totals;
  const r = await q.query<{ i: number; code: string; total: string }>(
    `SELECT c.i, c.code, sum(c.amount::numeric)::numeric(20, 2)::text AS total
       FROM unnest($1::int[], $2::text[], $3::text[]) WITH ORDINALITY AS c(i, code, amount, ord)
      GROUP BY c.i, c.code ORDER BY c.i, min(c.ord)`,
    [rows.map((c) => c.i), rows.map((c) => c.currency), rows.map((c) => c.amount)],
  );
  for (const row of r.rows) totals[row.i]!.set(row.code, row.total);
  return totals;
}

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
export function creditGrantsConsumer(pool: Pool, relay?: OutboxRelay, interest?: WebhookInterestCache) {
  const written = new WeakMap<Delivery<Grant>, OutboxMessage[]>();
  return consumer({
    durable: CREDIT_GRANTS_CONSUMER,
    event: WalletCreditGrant,
    maxDeliver: 10,
    async applyBatch(tx, batch) {
      const ordered = [...batch].sort((a, b) => byPlayer(a.payload, b.payload));
      const emit = new Map<string, boolean>();
      for (const { payload, ctx } of ordered) {
        if (!emit.has(payload.appId))
          emit.set(payload.appId, interest ? await interest.wants(payload.appId, 'currency.credited', ctx.requestId) : true);
      }
      const totals = await pooledTotals(
        tx,
        ordered.map((d) => d.payload),
      );
      const idsOf = await currencyIdsOf(tx, ordered, totals);
      for (const [i, d] of ordered.entries()) {
        const { payload: grant, messageId, ctx } = d;
        const ids = idsOf.get(grant.appId)!;
        const idOf = (code: string) => {
          const currencyId = ids.get(code);
          if (!currencyId) throw new UnknownCurrencyError(`app ${grant.appId} has no currency "${code}"`);
          return currencyId;
        };
        const own = grant.credits.filter((c) => c.reference !== undefined && !isZero(c.amount));
        const base = {
          appId: grant.appId,
          playerId: grant.playerId,
          reason: grant.reason,
          requestId: ctx.requestId,
          emitEvent: emit.get(grant.appId)!,
        };
        const events: OutboxMessage[] = [];
        const balances: Record<string, string> = {};
        for (const [code, amount] of totals[i]!) {
          const currencyId = idOf(code);
          if (amount === '0.00') continue;
          const made = await addToBalance(tx, { ...base, currencyId, amount, reference: messageId });
          events.push(...made.events);
          balances[code] = made.balance;
        }
        for (const c of own) {
          const made = await addToBalanceOnce(tx, { ...base, currencyId: idOf(c.currency), amount: c.amount, reference: c.reference! });
          if (made) events.push(...made.events);
          if (made) balances[c.currency] = made.balance;
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

/** The currency ids of every code the batch credits, per app: one statement per app. */
async function currencyIdsOf(tx: Queryable, ordered: Delivery<Grant>[], totals: Map<string, string>[]): Promise<Map<string, Map<string, string>>> {
  const codesOf = new Map<string, Set<string>>();
  ordered.forEach(({ payload: g }, i) => {
    const codes = codesOf.get(g.appId) ?? new Set<string>();
    for (const code of totals[i]!.keys()) codes.add(code);
    for (const c of g.credits) if (c.reference !== undefined && !isZero(c.amount)) codes.add(c.currency);
    codesOf.set(g.appId, codes);
  });
  const idsOf = new Map<string, Map<string, string>>();
  for (const [appId, codes] of codesOf) idsOf.set(appId, await currencyIdsByCode(tx, appId, [...codes]));
  return idsOf;
}

const byPlayer = (a: Grant, b: Grant) =>
  a.appId < b.appId ? -1 : a.appId > b.appId ? 1 : a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0;

import {
  consumer,
  DURABLE,
  StoreRefundApplied,
  type Delivery,
  type OutboxMessage,
  type OutboxRelay,
  type PoolClient,
  type WebhookInterestCache,
} from '@ccs/shared';
import type { z } from 'zod';
import { addToBalanceOnce, sumByCurrency, takeBelowZeroOnce } from '../repositories/balances-repo.js';
import { currencyIdsByCode } from '../repositories/currencies-repo.js';
import { UnknownCurrencyError } from './credit-grants.js';

/** Durable name of the wallet's store-refund consumer (the store waits for its applied notices). */
export const STORE_REFUNDS_CONSUMER = DURABLE.walletStoreRefunds;

type Refund = z.infer<typeof StoreRefundApplied.payload>;

/** The ledger reference of a store refund's rows (its claw-back and, under another reason, its reversal). */
export const storeRefundReference = (refundId: string): string => `store-refund:${refundId}`;

/**
 * Applies store refunds (grants.store.refund, docs/store.md "Debt"): a `refund` takes back each
 * currency the purchase granted, below zero if it was spent (a debt, which blocks every debit of
 * that currency until credits cover it), ledger reason `store_refund`; a `reversal` gives it again
 * (`store_refund_reversed`, with its `currency.credited` webhook event). One ledger row per
 * currency, referenced `store-refund:<refundId>`. Exactly once: every message of a batch in ONE
 * transaction (the runtime's), which records each refund as processed under its refund id and
 * kind (so the same refund published again under another message id changes nothing either), and
 * each row is also once per (refund, currency, reason) by the ledger's once-per-reference index.
 * A currency the app does not have fails the batch; the runtime then applies its messages one by
 * one and retries that one with backoff before parking it, as for credit grants. Refunds are
 * applied player by player, each player's currencies in code order, so concurrent batches lock
 * balances in the same order. The runtime sends each message's applied notice after the commit.
 */
export function storeRefundsConsumer(relay?: OutboxRelay, interest?: WebhookInterestCache) {
  const written = new WeakMap<Delivery<Refund>, OutboxMessage[]>();
  return consumer({
    durable: STORE_REFUNDS_CONSUMER,
    event: StoreRefundApplied,
    maxDeliver: 10,
    processedId: (r) => `store-${r.kind}:${r.refundId}`,
    async applyBatch(tx, batch) {
      for (const d of [...batch].sort((a, b) => byPlayer(a.payload, b.payload))) {
        const { appId } = d.payload;
        const emitEvent = d.payload.kind === 'reversal' && interest ? await interest.wants(appId, 'currency.credited', d.ctx.requestId) : true;
        const events = await applyRefund(tx, d, emitEvent);
        if (events.length) written.set(d, events);
      }
    },
    // A reversal's currency.credited events, once committed (the relay publishes them otherwise).
    afterCommit(batch) {
      const events = batch.flatMap((d) => written.get(d) ?? []);
      if (events.length) void relay?.publishNow(events).catch(() => undefined);
    },
  });
}

/** One refund or reversal: each of its currencies (summed per code, in code order) taken back or given again. Returns the events written. */
async function applyRefund(tx: PoolClient, d: Delivery<Refund>, emitEvent: boolean): Promise<OutboxMessage[]> {
  const { payload: r, ctx } = d;
  // A product that granted only chests: nothing of the wallet's to take back.
  if (r.currencies.length === 0) return [];
  const totals = [...(await sumByCurrency(tx, r.currencies))].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const ids = await currencyIdsByCode(
    tx,
    r.appId,
    totals.map(([code]) => code),
  );
  const events: OutboxMessage[] = [];
  for (const [code, amount] of totals) {
    const currencyId = ids.get(code);
    if (!currencyId) throw new UnknownCurrencyError(`app ${r.appId} has no currency "${code}"`);
    if (amount === '0.00') continue;
    const change = {
      appId: r.appId,
      playerId: r.playerId,
      currencyId,
      amount,
      reference: storeRefundReference(r.refundId),
      requestId: ctx.requestId,
    };
    if (r.kind === 'refund') await takeBelowZeroOnce(tx, { ...change, reason: 'store_refund' });
    else events.push(...((await addToBalanceOnce(tx, { ...change, reason: 'store_refund_reversed', emitEvent }))?.events ?? []));
  }
  return events;
}

const byPlayer = (a: Refund, b: Refund) =>
  a.appId < b.appId ? -1 : a.appId > b.appId ? 1 : a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0;

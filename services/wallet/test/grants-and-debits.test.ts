import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AppError,
  CreditCurrency,
  DebitCurrency,
  GetBalances,
  ListCurrencies,
  markProcessedBatch,
  readContentFile,
  RefundDebit,
  watchApplied,
  withTransaction,
  type AppContent,
  type CallContext,
} from '@ccs/shared';
import { creditGrantsConsumer } from '../src/consumers/credit-grants.js';
import { grantCredits, ledgerTotals, loadContent, startWalletTier, walletPool, type WalletTier } from './support/wallet-tier.js';

/** A content version that sells nothing for gems and lists only `currencies`. */
function withoutGems(content: AppContent, currencies: AppContent['currencies']): AppContent {
  const { gems: _i, ...initial } = content.players.initial_currency;
  const { gems: _w, ...bonus } = content.players.welcome_bonus;
  const codes = new Set(currencies.map((c) => c.code));
  // The store sells gems: a content without them sells nothing at the stores either.
  const { compliance: _c, duplicates: _d, store: _s, ...rest } = content;
  return {
    ...rest,
    currencies,
    chests: content.chests
      .filter((c) => !c.requires_key || codes.has(c.requires_key.currency))
      .map((c) => ({
        ...c,
        price: Object.fromEntries(Object.entries(c.price).filter(([code]) => code !== 'gems')),
        // A timer skipped with a retired currency keeps its timer, without the skip.
        ...(c.unlock?.skip && !codes.has(c.unlock.skip.currency) ? { unlock: { seconds: c.unlock.seconds } } : {}),
      })),
    players: { ...content.players, initial_currency: initial, welcome_bonus: bonus },
    // A collection reward in a retired currency is dropped (a reward must give something).
    collections: content.collections.map(({ completion_reward, ...c }) => {
      const currencies = Object.fromEntries(Object.entries(completion_reward?.currencies ?? {}).filter(([code]) => codes.has(code)));
      const kept = {
        ...(Object.keys(currencies).length ? { currencies } : {}),
        ...(completion_reward?.chests ? { chests: completion_reward.chests } : {}),
      };
      return Object.keys(kept).length ? { ...c, completion_reward: kept } : c;
    }),
  };
}

const ctxOf = (appId: string, playerId?: string): CallContext => ({ requestId: randomUUID(), appId, playerId });

describe('wallet over NATS: content, grants, debits and refunds', () => {
  let tier: WalletTier;
  const appId = randomUUID();
  const otherAppId = randomUUID();

  beforeAll(async () => {
    tier = await startWalletTier();
    await loadContent(tier, appId, 1);
    await loadContent(tier, otherAppId, 1);
  });
  afterAll(async () => tier?.close());

  const balances = async (app: string, playerId: string) => {
    const r = await tier.bus.request(GetBalances, { playerId }, ctxOf(app));
    return Object.fromEntries(r.balances.map((b) => [b.code, b.amount]));
  };
  const currencyId = async (app: string, code: string) => {
    const r = await tier.bus.request(ListCurrencies, {}, ctxOf(app));
    return r.currencies.find((c) => c.code === code)!.id;
  };
  const debit = (app: string, playerId: string, amount: string, reference: string = randomUUID(), currency = 'coins') =>
    tier.bus.request(DebitCurrency, { playerId, currency, amount, reference }, ctxOf(app));

  it('lists the currencies of loaded content with UUID ids, without balances when no player asks', async () => {
    const r = await tier.bus.request(ListCurrencies, {}, ctxOf(appId));
    expect(r.currencies.map((c) => [c.code, c.name])).toEqual(readContentFile().currencies.map((c) => [c.code, c.name]));
    for (const c of r.currencies) {
      expect(c.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(c.balance).toBeUndefined();
    }
    const other = await tier.bus.request(ListCurrencies, {}, ctxOf(otherAppId));
    expect(other.currencies.map((c) => c.id)).not.toContain(r.currencies[0]!.id);
  });

  it('applies a credit grant, one ledger row per currency, and answers balances with 0.00 for the rest', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [
      { currency: 'coins', amount: '100' },
      { currency: 'coins', amount: '0.50' },
    ]);
    expect(await balances(appId, player)).toEqual({ coins: '100.50', gems: '0.00', vault_key: '0.00' });
    const coins = await ledgerTotals(walletPool(tier), appId, player, await currencyId(appId, 'coins'));
    expect(coins).toEqual({ sum: '100.50', rows: 1, balance: '100.50' });
  });

  it('applies a redelivered grant (same message id) only once, even concurrently', async () => {
    const player = randomUUID();
    const id = await grantCredits(tier, appId, player, [{ currency: 'gems', amount: '5' }]);
    const consumer = creditGrantsConsumer();
    const payload = { appId, playerId: player, reason: 'welcome_bonus' as const, credits: [{ currency: 'gems', amount: '5' }] };
    // As the runtime delivers a batch: its ids marked processed, then the fresh ones applied, in one transaction.
    const deliver = (messageId: string, deliveryCount: number) =>
      withTransaction(walletPool(tier), async (tx) => {
        const fresh = await markProcessedBatch(tx, [messageId], consumer.durable);
        if (fresh.has(messageId)) await consumer.applyBatch(tx, [{ payload, messageId, ctx: ctxOf(appId), deliveryCount }]);
      });
    await Promise.all(Array.from({ length: 5 }, () => deliver(id, 2)));
    expect(await balances(appId, player)).toEqual({ coins: '0.00', gems: '5.00', vault_key: '0.00' });

    const fresh = randomUUID();
    await Promise.all(Array.from({ length: 5 }, () => deliver(fresh, 1)));
    expect(await balances(appId, player)).toEqual({ coins: '0.00', gems: '10.00', vault_key: '0.00' });
    const gems = await ledgerTotals(walletPool(tier), appId, player, await currencyId(appId, 'gems'));
    expect(gems).toEqual({ sum: '10.00', rows: 2, balance: '10.00' });
  });

  it('applies a grant that arrived before its app content once the content lands', async () => {
    const lateApp = randomUUID();
    const player = randomUUID();
    const grantId = randomUUID();
    const watch = watchApplied(tier.nc, tier.config.NATS_PREFIX, [grantId]);
    await grantCredits(tier, lateApp, player, [{ currency: 'coins', amount: '1000' }], { id: grantId, wait: false });
    await new Promise((r) => setTimeout(r, 300));
    expect(await balances(lateApp, player)).toEqual({});
    await loadContent(tier, lateApp, 1);
    expect((await watch.done(20_000)).has(grantId)).toBe(true);
    expect(await balances(lateApp, player)).toEqual({ coins: '1000.00', gems: '0.00', vault_key: '0.00' });
  });

  it('takes a newer content version (renames, new maximum, retired currency) and never loses balances', async () => {
    const app = randomUUID();
    const player = randomUUID();
    await loadContent(tier, app, 1);
    const coinsId = await currencyId(app, 'coins');
    const gemsId = await currencyId(app, 'gems');
    await grantCredits(tier, app, player, [{ currency: 'gems', amount: '7' }]);
    const base = readContentFile();
    await loadContent(tier, app, 2, withoutGems(base, [{ code: 'coins', name: 'Gold', max_credit: '50', whole: false }]));
    const v2 = await tier.bus.request(ListCurrencies, {}, ctxOf(app, player));
    expect(v2.currencies).toEqual([{ id: coinsId, code: 'coins', name: 'Gold', balance: '0.00' }]);
    // An older version delivered late changes nothing.
    await loadContent(tier, app, 1);
    expect((await tier.bus.request(ListCurrencies, {}, ctxOf(app))).currencies.map((c) => c.name)).toEqual(['Gold']);
    // The retired currency's balance is kept and comes back with it.
    expect(await ledgerTotals(walletPool(tier), app, player, gemsId)).toMatchObject({ balance: '7.00' });
    await loadContent(tier, app, 3, base);
    const v3 = await tier.bus.request(ListCurrencies, {}, ctxOf(app, player));
    expect(v3.currencies.slice(0, 2)).toEqual([
      { id: coinsId, code: 'coins', name: 'Coins', balance: '0.00' },
      { id: gemsId, code: 'gems', name: 'Gems', balance: '7.00' },
    ]);
    expect(v3.currencies.map((c) => c.code)).toEqual(base.currencies.map((c) => c.code));
  });

  it("applies a credit once under the gateway's retry key, also when the request comes again concurrently", async () => {
    const player = randomUUID();
    const coins = await currencyId(appId, 'coins');
    const retryKey = randomUUID();
    const credit = () => tier.bus.request(CreditCurrency, { currencyId: coins, amount: '7', keyKind: 'publishable', retryKey }, ctxOf(appId, player));
    const answers = await Promise.all([credit(), credit(), credit()]);
    // One applied it; the repeats answer the balance, marked as repeats.
    expect(answers.map((a) => a.replayed).sort()).toEqual([false, true, true]);
    expect(answers.map((a) => a.balance)).toEqual(['7.00', '7.00', '7.00']);
    expect(await ledgerTotals(walletPool(tier), appId, player, coins)).toEqual({ sum: '7.00', rows: 1, balance: '7.00' });
    // Another request (another key) is another credit; the key is per player.
    await tier.bus.request(CreditCurrency, { currencyId: coins, amount: '1', keyKind: 'publishable', retryKey: randomUUID() }, ctxOf(appId, player));
    expect(
      (await tier.bus.request(CreditCurrency, { currencyId: coins, amount: '2', keyKind: 'publishable', retryKey }, ctxOf(appId, randomUUID())))
        .replayed,
    ).toBe(false);
    expect(await ledgerTotals(walletPool(tier), appId, player, coins)).toEqual({ sum: '8.00', rows: 2, balance: '8.00' });
    // A retry key is a UUID the gateway makes: anything else is refused by the contract (the caller validates).
    await expect(
      tier.bus.request(CreditCurrency, { currencyId: coins, amount: '1', keyKind: 'publishable', retryKey: 'not-a-uuid' }, ctxOf(appId, player)),
    ).rejects.toThrow(/uuid/i);
  });

  it('never debits below zero: 20 concurrent debits of 100 from 1000 leave exactly 10 successes', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '1000' }]);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => debit(appId, player, '100')));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(ok).toHaveLength(10);
    expect(failed).toHaveLength(10);
    for (const e of failed) {
      expect(e).toBeInstanceOf(AppError);
      expect(e).toMatchObject({ kind: 'conflict', code: 'insufficient_funds' });
    }
    expect(await balances(appId, player)).toMatchObject({ coins: '0.00' });
    const totals = await ledgerTotals(walletPool(tier), appId, player, await currencyId(appId, 'coins'));
    expect(totals).toEqual({ sum: '0.00', rows: 11, balance: '0.00' });
  });

  it('is idempotent on the debit reference, also under concurrency, and refuses a reused reference', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '300' }]);
    const reference = `purchase-${randomUUID()}`;
    const replies = await Promise.all(Array.from({ length: 5 }, () => debit(appId, player, '120', reference)));
    for (const r of replies) expect(r).toMatchObject({ currency: 'coins', balance: '180.00' });
    expect(await debit(appId, player, '120.00', reference)).toMatchObject({ balance: '180.00' });
    expect(await balances(appId, player)).toMatchObject({ coins: '180.00' });
    await expect(debit(appId, player, '1', reference)).rejects.toMatchObject({ kind: 'conflict', code: 'reference_reused' });
    // An insufficient debit leaves nothing behind: the same reference can succeed later.
    const big = randomUUID();
    // The refusal says what the debit needed and what the player holds, as amounts are answered.
    await expect(debit(appId, player, '500', big)).rejects.toMatchObject({
      kind: 'conflict',
      code: 'insufficient_funds',
      errors: [{ meta: { currency: 'coins', required: '500.00', balance: '180.00' } }],
    });
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '400' }]);
    expect(await debit(appId, player, '500', big)).toMatchObject({ balance: '80.00' });
  });

  it('refunds a debit exactly once, even when compensations race', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'gems', amount: '50' }]);
    const reference = randomUUID();
    await debit(appId, player, '20', reference, 'gems');
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => tier.bus.request(RefundDebit, { reference }, ctxOf(appId))));
    expect(outcomes.filter((o) => o.outcome === 'refunded')).toEqual([{ outcome: 'refunded', balance: '50.00' }]);
    expect(outcomes.filter((o) => o.outcome === 'already_refunded')).toHaveLength(4);
    expect(await balances(appId, player)).toMatchObject({ gems: '50.00' });
    expect(await tier.bus.request(RefundDebit, { reference: 'never-debited' }, ctxOf(appId))).toEqual({ outcome: 'unknown_reference' });
    // Another app cannot refund (or even see) this app's debit.
    expect(await tier.bus.request(RefundDebit, { reference }, ctxOf(otherAppId))).toEqual({ outcome: 'unknown_reference' });
    const totals = await ledgerTotals(walletPool(tier), appId, player, await currencyId(appId, 'gems'));
    expect(totals).toEqual({ sum: '50.00', rows: 3, balance: '50.00' });
  });

  it('refuses a debit that arrives after its refund (a purchase given up), so no money is lost', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '100' }]);
    const reference = randomUUID();
    expect(await tier.bus.request(RefundDebit, { reference }, ctxOf(appId))).toEqual({ outcome: 'unknown_reference' });
    await expect(debit(appId, player, '40', reference)).rejects.toMatchObject({ kind: 'conflict', code: 'reference_voided' });
    expect(await balances(appId, player)).toMatchObject({ coins: '100.00' });
    // The void is per app: the same reference still debits in another app.
    await grantCredits(tier, otherAppId, player, [{ currency: 'coins', amount: '100' }]);
    expect(await debit(otherAppId, player, '40', reference)).toMatchObject({ balance: '60.00' });
  });

  it('keeps each app apart: a balance in one app is not spendable in another', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '10' }]);
    await expect(debit(otherAppId, player, '5')).rejects.toMatchObject({ kind: 'conflict', code: 'insufficient_funds' });
    expect(await balances(otherAppId, player)).toEqual({ coins: '0.00', gems: '0.00', vault_key: '0.00' });
    expect(await balances(appId, player)).toMatchObject({ coins: '10.00' });
  });

  it('answers bad debits with typed errors: unknown currency 404, zero 422, no app 400', async () => {
    const player = randomUUID();
    await expect(debit(appId, player, '1', randomUUID(), 'rubies')).rejects.toMatchObject({ kind: 'not_found', code: 'currency_not_found' });
    await expect(debit(appId, player, '0.00')).rejects.toMatchObject({ kind: 'invalid', code: 'amount_not_positive' });
    await expect(tier.bus.request(GetBalances, { playerId: player }, { requestId: randomUUID() })).rejects.toMatchObject({
      kind: 'bad_request',
      code: 'missing_app',
    });
  });

  it('refuses to update, delete or truncate ledger rows', async () => {
    const pool = walletPool(tier);
    await expect(pool.query('UPDATE ledger SET delta = 1000000 WHERE app_id = $1', [appId])).rejects.toThrow(/append-only/);
    await expect(pool.query('DELETE FROM ledger WHERE app_id = $1', [appId])).rejects.toThrow(/append-only/);
    await expect(pool.query('TRUNCATE ledger CASCADE')).rejects.toThrow(/append-only/);
    // Below zero only by a store refund (store-refunds.test.ts): nothing else may take a balance there.
    await expect(pool.query('UPDATE balances SET amount = -1 WHERE app_id = $1', [appId])).rejects.toThrow(/only a store refund/);
  });
});

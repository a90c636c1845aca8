import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminCreditPlayer,
  AppError,
  CreditCurrency,
  DebitCurrency,
  DURABLE,
  GetBalances,
  grantsStream,
  ListCurrencies,
  readContentFile,
  StoreRefundApplied,
  watchApplied,
  withTransaction,
  type CallContext,
} from '@ccs/shared';
import type { z } from 'zod';
import { streamName } from '../../../packages/shared/src/runtime/subjects.js';
import { storeRefundsConsumer } from '../src/consumers/store-refunds.js';
import { grantCredits, ledgerTotals, loadContent, startWalletTier, walletPool, type WalletTier } from './support/wallet-tier.js';

type Refund = z.infer<typeof StoreRefundApplied.payload>;

const ctxOf = (appId: string, playerId?: string): CallContext => ({ requestId: randomUUID(), appId, playerId });

/**
 * Store refunds (grants.store.refund): the currencies a purchase granted are taken back even when
 * spent, leaving a debt that blocks every debit of the currency until credits cover it; a reversal
 * gives them again. Once per refund, whatever delivers it.
 */
describe('wallet: store refunds and debts', () => {
  let tier: WalletTier;
  const appId = randomUUID();
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // Every app's webhooks take currency.credited here, so a reversal writes its event.
    tier = await startWalletTier({}, ['currency.credited']);
    await loadContent(tier, appId, 1);
    for (const c of (await tier.bus.request(ListCurrencies, {}, ctxOf(appId))).currencies) ids[c.code] = c.id;
  });
  afterAll(async () => tier?.close());

  const refundOf = (playerId: string, currencies: [string, string][], overrides: Partial<Refund> = {}): Refund => ({
    refundId: randomUUID(),
    appId,
    playerId,
    purchaseId: randomUUID(),
    kind: 'refund',
    policy: 'debt',
    currencies: currencies.map(([currency, amount]) => ({ currency, amount })),
    chestIds: [],
    ...overrides,
  });
  const apply = (r: Refund, id = r.refundId) => tier.publishApplied(StoreRefundApplied, r, { id, appId });
  const balances = async (playerId: string) =>
    Object.fromEntries((await tier.bus.request(GetBalances, { playerId }, ctxOf(appId))).balances.map((b) => [b.code, b.amount]));
  const debit = (playerId: string, amount: string, reference: string = randomUUID(), currency = 'coins') =>
    tier.bus.request(DebitCurrency, { playerId, currency, amount, reference }, ctxOf(appId));
  const rowsOf = async (playerId: string) =>
    (
      await walletPool(tier).query<{ code: string; reason: string; reference: string | null; delta: string; after: string }>(
        `SELECT c.code, l.reason, l.reference, l.delta::text AS delta, l.balance_after::text AS after
           FROM ledger l JOIN currencies c ON c.id = l.currency_id WHERE l.app_id = $1 AND l.player_id = $2 ORDER BY l.id`,
        [appId, playerId],
      )
    ).rows;
  const refundRows = async (playerId: string) => (await rowsOf(playerId)).filter((r) => r.reason.startsWith('store_'));

  it('takes back a refund larger than the balance: one store_refund row per currency, the balance below zero, listed with its debt', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [
      { currency: 'coins', amount: '100' },
      { currency: 'gems', amount: '5' },
    ]);
    // Two lines of one currency are one row (summed).
    const r = refundOf(player, [
      ['coins', '200'],
      ['gems', '5'],
      ['coins', '50'],
    ]);
    await apply(r);
    expect(await refundRows(player)).toEqual([
      { code: 'coins', reason: 'store_refund', reference: `store-refund:${r.refundId}`, delta: '-250.00', after: '-150.00' },
      { code: 'gems', reason: 'store_refund', reference: `store-refund:${r.refundId}`, delta: '-5.00', after: '0.00' },
    ]);
    expect(await balances(player)).toEqual({ coins: '-150.00', gems: '0.00', vault_key: '0.00' });
    expect(await ledgerTotals(walletPool(tier), appId, player, ids.coins!)).toEqual({ sum: '-150.00', rows: 2, balance: '-150.00' });
    const listed = await tier.bus.request(ListCurrencies, {}, ctxOf(appId, player));
    expect(listed.currencies.map(({ code, balance, debt }) => ({ code, balance, debt }))).toEqual([
      { code: 'coins', balance: '-150.00', debt: '150.00' },
      { code: 'gems', balance: '0.00', debt: undefined },
      { code: 'vault_key', balance: '0.00', debt: undefined },
    ]);
    // Without a player nothing of anyone's balance or debt is shown.
    for (const c of (await tier.bus.request(ListCurrencies, {}, ctxOf(appId))).currencies) expect(c).not.toHaveProperty('debt');
  });

  it('refuses every debit of a currency in debt (403 currency_in_debt, what is owed) with nothing debited, until credits cover it', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [
      { currency: 'coins', amount: '100' },
      { currency: 'gems', amount: '50' },
    ]);
    await apply(refundOf(player, [['coins', '300']]));
    const rowsBefore = await rowsOf(player);
    const refused = randomUUID();
    for (const amount of ['1', '5000']) {
      const err = await debit(player, amount, refused).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).errors).toEqual([
        {
          kind: 'forbidden',
          code: 'currency_in_debt',
          detail: expect.stringMatching(/200\.00 coins is owed.*back to zero/),
          meta: { currency: 'coins', debt: '200.00' },
        },
      ]);
    }
    expect(await rowsOf(player)).toEqual(rowsBefore);
    expect((await walletPool(tier).query('SELECT 1 FROM debits WHERE app_id = $1 AND reference = $2', [appId, refused])).rowCount).toBe(0);
    // Another currency of the player spends as usual.
    expect(await debit(player, '10', randomUUID(), 'gems')).toMatchObject({ balance: '40.00' });

    // A player credit covers part of the debt: the balance it answers is still below zero, and so is the block.
    const credited = await tier.bus.request(CreditCurrency, { currencyId: ids.coins!, amount: '150', keyKind: 'publishable' }, ctxOf(appId, player));
    expect(credited).toEqual({ balance: '-50.00', replayed: false });
    await expect(debit(player, '1', refused)).rejects.toMatchObject({
      code: 'currency_in_debt',
      errors: [{ meta: { currency: 'coins', debt: '50.00' } }],
    });
    // The studio's grant covers the rest: at zero the debit is only too large; above it, it is taken.
    const granted = await tier.bus.request(
      AdminCreditPlayer,
      { appId, playerId: player, currency: 'coins', amount: '50', reference: randomUUID() },
      ctxOf(appId),
    );
    expect(granted.balance).toBe('0.00');
    await expect(debit(player, '1', refused)).rejects.toMatchObject({ kind: 'conflict', code: 'insufficient_funds' });
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '10' }]);
    // The reference refused before left nothing behind: it debits now.
    expect(await debit(player, '1', refused)).toMatchObject({ balance: '9.00' });
  });

  it('applies a refund once: again under its message id, under another one, and by batches that skip the processed record', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '100' }]);
    const r = refundOf(player, [['coins', '30']]);
    await apply(r);
    expect((await tier.publish(StoreRefundApplied, r, { id: r.refundId, appId })).duplicate).toBe(true);
    // Re-published under another message id: the runtime knows the refund (its applied notice still comes).
    await apply(r, randomUUID());
    expect(await balances(player)).toMatchObject({ coins: '70.00' });

    // The ledger's once-per-reference index on its own: batches applied without the processed record,
    // the first refund again and a new one five times at once.
    const consumer = storeRefundsConsumer();
    const r2 = refundOf(player, [['coins', '20']]);
    const deliver = (payload: Refund) =>
      withTransaction(walletPool(tier), (tx) => consumer.applyBatch(tx, [{ payload, messageId: randomUUID(), ctx: ctxOf(appId), deliveryCount: 1 }]));
    await deliver(r);
    const settled = await Promise.allSettled(Array.from({ length: 5 }, () => deliver(r2)));
    expect(settled.some((s) => s.status === 'fulfilled')).toBe(true);
    expect(await balances(player)).toMatchObject({ coins: '50.00' });
    expect((await refundRows(player)).map((row) => [row.reference, row.delta])).toEqual([
      [`store-refund:${r.refundId}`, '-30.00'],
      [`store-refund:${r2.refundId}`, '-20.00'],
    ]);
  });

  it("gives a reversed refund back once, with its currency.credited event (a refund's claw-back writes none)", async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '100' }]);
    const r = refundOf(player, [['coins', '250']]);
    await apply(r);
    expect(await balances(player)).toMatchObject({ coins: '-150.00' });
    const reversal = refundOf(player, [['coins', '250']], { kind: 'reversal', purchaseId: r.purchaseId });
    await apply(reversal);
    await apply(reversal, randomUUID());
    expect(await balances(player)).toMatchObject({ coins: '100.00' });
    expect(await refundRows(player)).toEqual([
      { code: 'coins', reason: 'store_refund', reference: `store-refund:${r.refundId}`, delta: '-250.00', after: '-150.00' },
      { code: 'coins', reason: 'store_refund_reversed', reference: `store-refund:${reversal.refundId}`, delta: '250.00', after: '100.00' },
    ]);
    const events = await walletPool(tier).query<{ data: Record<string, unknown> }>(
      `SELECT payload->'data' AS data FROM outbox
        WHERE payload->>'type' = 'currency.credited' AND payload->>'playerId' = $1 AND payload->'data'->>'reference' LIKE 'store-refund:%'`,
      [player],
    );
    expect(events.rows.map((e) => e.data)).toEqual([
      {
        player_id: player,
        currency: 'coins',
        amount: '250.00',
        reason: 'store_refund_reversed',
        reference: `store-refund:${reversal.refundId}`,
        credited_at: expect.any(String),
      },
    ]);
  });

  it('retries a refund naming a currency the app does not have, taking nothing, and applies it once the content has it', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '100' }]);
    const early = refundOf(player, [
      ['coins', '10'],
      ['tickets', '5'],
    ]);
    const watch = watchApplied(tier.nc, tier.config.NATS_PREFIX, [early.refundId], DURABLE.walletStoreRefunds);
    await tier.publish(StoreRefundApplied, early, { id: early.refundId, appId });
    // Another player's refund behind it is not held up.
    const other = randomUUID();
    await grantCredits(tier, appId, other, [{ currency: 'coins', amount: '100' }]);
    await apply(refundOf(other, [['coins', '40']]));
    expect(await balances(other)).toMatchObject({ coins: '60.00' });
    const jsm = await tier.nc.jetstreamManager();
    const durable = streamName(tier.config.NATS_PREFIX, DURABLE.walletStoreRefunds);
    await expect
      .poll(async () => (await jsm.consumers.info(grantsStream(tier.config.NATS_PREFIX), durable)).num_redelivered, { timeout: 15_000 })
      .toBeGreaterThan(0);
    expect(await balances(player)).toMatchObject({ coins: '100.00' });

    const base = readContentFile();
    await loadContent(tier, appId, 2, {
      ...base,
      currencies: [...base.currencies, { code: 'tickets', name: 'Tickets', max_credit: '100', whole: true }],
    });
    expect((await watch.done(45_000)).has(early.refundId)).toBe(true);
    expect(await balances(player)).toMatchObject({ coins: '90.00', tickets: '-5.00' });
  }, 60_000);

  it('lets nothing but a store refund take a balance below zero, or lower one that is: the balances and the ledger refuse it', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '10' }]);
    const pool = walletPool(tier);
    const lower = (to: string) =>
      pool.query('UPDATE balances SET amount = $3::numeric WHERE app_id = $1 AND player_id = $2 AND currency_id = $4', [
        appId,
        player,
        to,
        ids.coins,
      ]);
    await expect(lower('-1')).rejects.toThrow(/only a store refund/);
    await expect(
      pool.query(`INSERT INTO balances (app_id, player_id, currency_id, amount) VALUES ($1, $2, $3, -5)`, [appId, randomUUID(), ids.coins]),
    ).rejects.toThrow(/only a store refund/);
    await expect(
      pool.query(
        `INSERT INTO ledger (app_id, player_id, currency_id, delta, balance_after, reason, reference) VALUES ($1, $2, $3, -20, -10, 'debit', $4)`,
        [appId, player, ids.coins, randomUUID()],
      ),
    ).rejects.toThrow(/ledger_balance_after_check/);
    await apply(refundOf(player, [['coins', '30']]));
    expect(await balances(player)).toMatchObject({ coins: '-20.00' });
    // Raising a debt (a credit's way) passes; lowering it again does not.
    await lower('-15');
    await expect(lower('-16')).rejects.toThrow(/only a store refund/);
    expect(await balances(player)).toMatchObject({ coins: '-15.00' });
  });

  it('loses no update when debits race a refund: each debit paid in full or refused, the refund taken once', async () => {
    const player = randomUUID();
    await grantCredits(tier, appId, player, [{ currency: 'coins', amount: '1000' }]);
    const r = refundOf(player, [['coins', '500']]);
    const [results] = await Promise.all([Promise.allSettled(Array.from({ length: 20 }, () => debit(player, '100'))), apply(r)]);
    const paid = results.filter((x) => x.status === 'fulfilled').length;
    for (const x of results) if (x.status === 'rejected') expect(['insufficient_funds', 'currency_in_debt']).toContain((x.reason as AppError).code);
    const expected = (1000 - 100 * paid - 500).toFixed(2);
    expect(await ledgerTotals(walletPool(tier), appId, player, ids.coins!)).toEqual({ sum: expected, rows: 2 + paid, balance: expected });
  });
});

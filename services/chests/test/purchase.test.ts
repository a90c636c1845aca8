import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DebitCurrency, GetInventory, PurchaseChests, readContentFile, startService, type AppContent } from '@ccs/shared';
import { chestsServiceWith } from '../src/service.js';
import { callOf, chestsApp, chestsSql, grantedChests, startChestsTier, type ChestsTier, type ChestsTierRun } from './support/chests-tier.js';

const content = readContentFile();
type App = Awaited<ReturnType<typeof chestsApp>>;

// Buying chests on the service tier: chests alone, the wallet answered by the wallet stand-in
// (balances in memory, each debit once per reference, refunds once). The purchase as rendered, the
// gateway's validation and idempotency headers, and the real wallet under concurrent purchases are
// end to end: test/e2e/chests/purchase.test.ts.
describe('buying chests (service tier)', () => {
  let run: ChestsTierRun;
  let tier: ChestsTier;
  let app: App;
  beforeAll(async () => {
    run = await startChestsTier({ PURCHASE_SWEEP_INTERVAL_MS: '200', PURCHASE_STALE_MS: '1500' });
    tier = run.tier;
    app = await chestsApp(tier);
  });
  afterAll(async () => tier?.close());

  /** A player of the app holding the starter chest and the welcome credits (1500 coins, 15 gems). */
  async function newPlayer(a: App = app): Promise<string> {
    const { playerId } = await grantedChests(tier, a.appId, { source: 'welcome' });
    run.wallet.credit(playerId, 'coins', 1500);
    run.wallet.credit(playerId, 'gems', 15);
    return playerId;
  }
  const buy = (playerId: string, slug: string, currency: string, quantity = 1, a: App = app) =>
    tier.bus.request(PurchaseChests, { chestTypeId: a.types[slug]!, currency, quantity }, callOf(a.appId, playerId));
  const inventoryOf = (playerId: string, a: App = app) =>
    tier.bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' }, callOf(a.appId, playerId));
  const purchases = (playerId: string) =>
    chestsSql<{ id: string; status: string }>(tier, "SELECT id, status FROM payments WHERE kind = 'purchase' AND player_id = $1", [playerId]);
  const debitsOf = (playerId: string) => [...run.wallet.debits.values()].filter((d) => d.playerId === playerId);
  const refusal = (kind: string, code: string) => ({ kind, errors: [{ code }] });

  it('answers a time-locked chest as the inventory shows it: locked, no timer started', async () => {
    const p = await newPlayer();
    const bought = await buy(p, 'hourglass-chest', 'coins');
    expect(bought.chests).toHaveLength(1);
    expect(bought.chests[0]!.lock).toEqual({ state: 'locked', unlocksAt: null });
    const listed = (await inventoryOf(p)).chests.find((c) => c.id === bought.chests[0]!.id);
    expect(listed?.lock).toEqual(bought.chests[0]!.lock);
    // A chest without a timer has no lock, in the answer as in the inventory.
    const wooden = await buy(p, 'wooden-chest', 'coins');
    expect(wooden.chests[0]).not.toHaveProperty('lock');
  });

  it('answers 409 insufficient_funds and changes nothing when the balance is too low', async () => {
    const p = await newPlayer();
    // Two Abyssal Chests cost 2,000 coins: the wallet's refusal comes through as it is, with its figures.
    await expect(buy(p, 'abyssal-chest', 'coins', 2)).rejects.toMatchObject({
      kind: 'conflict',
      errors: [{ code: 'insufficient_funds', meta: { currency: 'coins', required: '2000.00', balance: '1500.00' } }],
    });
    expect(run.wallet.balance(p, 'coins')).toBe(1500);
    expect((await inventoryOf(p)).totalChests).toBe(1);
  });

  it('answers 422 price_unavailable for a currency the chest is not sold in', async () => {
    const p = await newPlayer();
    await expect(buy(p, 'golden-chest', 'coins')).rejects.toMatchObject({
      kind: 'invalid',
      errors: [{ code: 'price_unavailable', source: { pointer: '/data/attributes/currency' } }],
    });
    await expect(buy(p, 'golden-chest', 'diamonds')).rejects.toMatchObject(refusal('invalid', 'price_unavailable'));
    expect(debitsOf(p)).toEqual([]);
  });

  describe('in an app whose inventories hold 3 chests', () => {
    let small: App;
    beforeAll(async () => {
      const c: AppContent = structuredClone(content);
      c.players.inventory_capacity = 3;
      small = await chestsApp(tier, { content: c });
    });

    it('refuses a purchase that does not fit before debiting anything (409 inventory_full)', async () => {
      const p = await newPlayer(small);
      expect(await inventoryOf(p, small)).toMatchObject({ capacity: 3, totalChests: 1 });
      await expect(buy(p, 'wooden-chest', 'coins', 3, small)).rejects.toMatchObject(refusal('conflict', 'inventory_full'));
      expect(run.wallet.balance(p, 'coins')).toBe(1500);
      expect(await purchases(p)).toEqual([]);
      expect((await buy(p, 'wooden-chest', 'coins', 2, small)).chests).toHaveLength(2);
      expect(await inventoryOf(p, small)).toMatchObject({ capacity: 3, totalChests: 3 });
      await expect(buy(p, 'wooden-chest', 'coins', 1, small)).rejects.toMatchObject(refusal('conflict', 'inventory_full'));
      expect(run.wallet.balance(p, 'coins')).toBe(500);
    });

    it('never overfills under concurrent purchases, refunding what was debited for chests that did not fit', async () => {
      const p = await newPlayer(small);
      run.wallet.credit(p, 'coins', 6500);
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => buy(p, 'wooden-chest', 'coins', 1, small)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject(refusal('conflict', 'inventory_full'));
      expect((await inventoryOf(p, small)).totalChests).toBe(3);
      expect(run.wallet.balance(p, 'coins')).toBe(6500 - 2 * 500);
      const statuses = await purchases(p);
      expect(statuses.every((s) => s.status === 'completed' || s.status === 'refunded')).toBe(true);
    });

    it("answers 404 for this app's chest ids in the demo app and the other way round", async () => {
      const p = await newPlayer(small);
      await expect(
        tier.bus.request(PurchaseChests, { chestTypeId: app.types['wooden-chest']!, currency: 'coins', quantity: 1 }, callOf(small.appId, p)),
      ).rejects.toMatchObject(refusal('not_found', 'chest_not_found'));
    });
  });

  it('refunds the debit when adding the chests fails (compensation)', async () => {
    const p = await newPlayer();
    await tier.stopService();
    const failGrant = () => {
      throw new Error('fault seam: the purchase grant fails');
    };
    const faulty = await startService(chestsServiceWith({ inPurchaseGrant: failGrant }), tier.config);
    try {
      await expect(buy(p, 'wooden-chest', 'coins')).rejects.toMatchObject(refusal('unavailable', 'purchase_interrupted'));
    } finally {
      await faulty.stop();
      await tier.startService();
    }
    expect(run.wallet.balance(p, 'coins')).toBe(1500);
    expect((await inventoryOf(p)).totalChests).toBe(1);
    const [row] = await purchases(p);
    expect(row!.status).toBe('refunded');
    // One debit of the price under the purchase's id, refunded once.
    expect(run.wallet.debits.get(row!.id)).toEqual({ playerId: p, currency: 'coins', amount: 500, refunded: true });
    expect(debitsOf(p)).toHaveLength(1);
  });

  it('refunds a purchase a crash left debited (the sweeper)', async () => {
    const p = await newPlayer();
    const purchaseId = randomUUID();
    // As if the process died right after the debit: the purchase row says debited, no chest added.
    await chestsSql(
      tier,
      `INSERT INTO payments (id, kind, app_id, player_id, chest_type_id, currency, quantity, amount, status)
      VALUES ($1, 'purchase', $2, $3, $4, 'coins', 1, 500, 'debited')`,
      [purchaseId, app.appId, p, app.types['wooden-chest']],
    );
    await tier.bus.request(
      DebitCurrency,
      { playerId: p, currency: 'coins', amount: '500', reference: purchaseId },
      { requestId: 'crash', appId: app.appId },
    );
    expect(run.wallet.balance(p, 'coins')).toBe(1000);
    await expect
      .poll(() => chestsSql(tier, "SELECT status FROM payments WHERE kind = 'purchase' AND id = $1", [purchaseId]), { timeout: 15_000 })
      .toEqual([{ status: 'refunded' }]);
    expect(run.wallet.balance(p, 'coins')).toBe(1500);
  });
});

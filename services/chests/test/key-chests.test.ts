import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DebitCurrency, GetChestType, OpenChests, startService, type BaseConfig } from '@ccs/shared';
import { chestsService } from '../src/service.js';
import {
  callOf,
  chestsApp,
  chestsSql,
  grantedChests,
  openChest,
  startChestsTier,
  type ChestsTier,
  type ChestsTierRun,
} from './support/chests-tier.js';

// Key-required chests on the service tier: chests alone, the keys held by the wallet stand-in
// (each debit once per reference, refunds once). The catalog's meta.requires_key as rendered is in
// test/e2e/chests/catalog.test.ts.
describe('key-required chests (service tier)', () => {
  let run: ChestsTierRun;
  let tier: ChestsTier;
  let appId: string;
  let types: Record<string, string>;
  beforeAll(async () => {
    // A crashed opening's key debit is stale after 2 s, and the sweeper looks every 200 ms.
    run = await startChestsTier({ PAYMENT_STALE_MS: '2000', PAYMENT_SWEEP_INTERVAL_MS: '200' });
    tier = run.tier;
    ({ appId, types } = await chestsApp(tier));
  });
  afterAll(async () => tier?.close());

  /** A player with the starter chest, `n` Vault Chests and `keys` Vault Keys. */
  async function playerWithVaults(n: number, keys: number): Promise<{ playerId: string; starter: string; chests: string[] }> {
    const {
      playerId,
      chests: [starter],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    const { chests } = await grantedChests(tier, appId, { playerId, chestTypeId: 'vault-chest', n });
    run.wallet.credit(playerId, 'vault_key', keys);
    return { playerId, starter: starter!, chests };
  }
  const keysOf = (playerId: string) => run.wallet.balance(playerId, 'vault_key');
  const addKey = (playerId: string) => run.wallet.credit(playerId, 'vault_key', keysOf(playerId) + 1);
  const openedCount = async (ids: string[]) =>
    (
      await chestsSql<{ n: number }>(tier, 'SELECT count(*)::int AS n FROM inventory_chests WHERE id = ANY($1::uuid[]) AND opened_at IS NOT NULL', [
        ids,
      ])
    )[0]!.n;
  const keyRequired = { kind: 'conflict', errors: [{ code: 'key_required', meta: { currency: 'vault_key', amount: 1 } }] };

  it('shows the key in the catalog', async () => {
    const vault = await tier.bus.request(GetChestType, { chestTypeId: types['vault-chest']! }, callOf(appId));
    expect(vault.requiresKey).toEqual({ currency: 'vault_key', amount: 1 });
    expect((await tier.bus.request(GetChestType, { chestTypeId: types['wooden-chest']! }, callOf(appId))).requiresKey).toBeUndefined();
  });

  it('answers 409 key_required without a key, changing nothing; with one, debits it and opens the chest', async () => {
    const { playerId, chests } = await playerWithVaults(1, 0);
    await expect(openChest(tier, appId, playerId, chests[0]!)).rejects.toMatchObject(keyRequired);
    expect(await openedCount(chests)).toBe(0);
    expect(keysOf(playerId)).toBe(0);

    addKey(playerId);
    const opened = await openChest(tier, appId, playerId, chests[0]!);
    expect(opened.items).toHaveLength(4);
    expect(keysOf(playerId)).toBe(0);
    const debits = await chestsSql<{ status: string; id: string }>(
      tier,
      "SELECT id, status FROM payments WHERE kind = 'key' AND chest_id = $1 ORDER BY created_at",
      [chests[0]],
    );
    // The refused key debited nothing: its payment failed.
    expect(debits.map((d) => d.status)).toEqual(['failed', 'completed']);
    expect(run.wallet.debits.get(`key:${debits[1]!.id}`)).toEqual({ playerId, currency: 'vault_key', amount: 1, refunded: false });
    expect(run.wallet.debits.has(`key:${debits[0]!.id}`)).toBe(false);
  });

  it('answers an Idempotency-Key again before taking a key: a replay returns the opening, a reuse on another chest is 409, neither debits', async () => {
    const { playerId, chests } = await playerWithVaults(2, 3);
    const key = `vault-${randomUUID()}`;
    const first = await openChest(tier, appId, playerId, chests[0]!, key);
    expect(keysOf(playerId)).toBe(2);
    const again = await openChest(tier, appId, playerId, chests[0]!, key);
    expect(again).toMatchObject({ openingId: first.openingId, items: first.items, replayed: true });
    await expect(openChest(tier, appId, playerId, chests[1]!, key)).rejects.toMatchObject({
      kind: 'conflict',
      errors: [{ code: 'idempotency_key_reused' }],
    });
    expect(await openedCount(chests)).toBe(1);
    expect(keysOf(playerId)).toBe(2);
    // One key payment: the replay and the reuse never reached the wallet.
    const payments = await chestsSql<{ n: number }>(
      tier,
      "SELECT count(*)::int AS n FROM payments WHERE kind = 'key' AND chest_id = ANY($1::uuid[])",
      [chests],
    );
    expect(payments[0]!.n).toBe(1);
  });

  it('lets exactly one of two concurrent opens share one key', async () => {
    const { playerId, chests } = await playerWithVaults(2, 1);
    const answers = await Promise.allSettled(chests.map((id) => openChest(tier, appId, playerId, id)));
    expect(answers.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((answers.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
      kind: 'conflict',
      errors: [{ code: 'key_required' }],
    });
    expect(await openedCount(chests)).toBe(1);
    expect(keysOf(playerId)).toBe(0);
  });

  it('refunds the key when the chest cannot be consumed: two replicas opening the same chest spend one key', async () => {
    const second = await startService(chestsService, tier.config as BaseConfig);
    try {
      const { playerId, chests } = await playerWithVaults(1, 3);
      const answers = await Promise.allSettled([1, 2, 3, 4].map(() => openChest(tier, appId, playerId, chests[0]!)));
      expect(answers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of answers)
        if (r.status === 'rejected') expect(r.reason).toMatchObject({ kind: 'forbidden', errors: [{ code: 'chest_already_opened' }] });
      await expect.poll(() => keysOf(playerId), { timeout: 10_000 }).toBe(2);
    } finally {
      await second.stop();
    }
  });

  it('settles a crash between the key debit and the opening: the sweeper refunds the key, or voids a debit that never happened', async () => {
    const { playerId, chests } = await playerWithVaults(1, 1);
    // A process debited the key (step 1 recorded, step 2 done) and died before opening the chest.
    const crashed = randomUUID();
    const insert =
      "INSERT INTO payments (id, kind, app_id, player_id, chest_id, currency, amount, status) VALUES ($1, 'key', $2, $3, $4, 'vault_key', 1, $5)";
    await chestsSql(tier, insert, [crashed, appId, playerId, chests[0], 'debited']);
    await tier.bus.request(
      DebitCurrency,
      { playerId, currency: 'vault_key', amount: '1', reference: `key:${crashed}` },
      { requestId: 'test', appId, playerId },
    );
    expect(keysOf(playerId)).toBe(0);
    // Another died before asking the wallet at all.
    const early = randomUUID();
    await chestsSql(tier, insert, [early, appId, playerId, chests[0], 'pending']);
    await expect
      .poll(
        async () => {
          const rows = await chestsSql<{ id: string; status: string }>(
            tier,
            "SELECT id, status FROM payments WHERE kind = 'key' AND id = ANY($1::uuid[])",
            [[crashed, early]],
          );
          return Object.fromEntries(rows.map((r) => [r.id, r.status]));
        },
        { timeout: 15_000 },
      )
      // The debited key went back; the debit that never happened ended failed, its reference voided.
      .toEqual({ [crashed]: 'refunded', [early]: 'failed' });
    expect(keysOf(playerId)).toBe(1);
    // The key is usable again, once.
    await openChest(tier, appId, playerId, chests[0]!);
    expect(keysOf(playerId)).toBe(0);
  });

  it('opens key-required chests in a batch, one key each; short of a key, opens nothing, names the chest and refunds the keys taken', async () => {
    const { playerId, starter, chests } = await playerWithVaults(2, 1);
    const all = [starter, ...chests];
    const openAll = () => tier.bus.request(OpenChests, { chestIds: all }, callOf(appId, playerId));
    await expect(openAll()).rejects.toMatchObject({
      kind: 'conflict',
      errors: [{ code: 'key_required', source: { pointer: '/data/2/id' }, meta: { currency: 'vault_key', amount: 1 } }],
    });
    expect(await openedCount(all)).toBe(0);
    expect(keysOf(playerId)).toBe(1);

    addKey(playerId);
    const batch = await openAll();
    expect(batch.openings.map((o) => o.chestId)).toEqual(all);
    expect(await openedCount(all)).toBe(3);
    expect(keysOf(playerId)).toBe(0);
    const debits = await chestsSql<{ chest_id: string; status: string }>(
      tier,
      "SELECT chest_id, status FROM payments WHERE kind = 'key' AND chest_id = ANY($1::uuid[]) ORDER BY created_at",
      [chests],
    );
    // The short batch took the first key (refunded) and was refused the second (failed, nothing debited); the second batch took one each.
    expect(debits.filter((d) => d.status === 'completed').map((d) => d.chest_id)).toEqual(chests);
    expect(debits.filter((d) => d.status === 'refunded').map((d) => d.chest_id)).toEqual([chests[0]]);
    expect(debits.filter((d) => d.status === 'failed').map((d) => d.chest_id)).toEqual([chests[1]]);
  });
});

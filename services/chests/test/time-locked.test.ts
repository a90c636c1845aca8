import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DebitCurrency, GetInventory, readContentFile, UnlockChest, type AppContent } from '@ccs/shared';
import { skipPrice } from '../src/payments/skip-saga.js';
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

const content = readContentFile();
/** The demo's time-locked chest type, and its rules, from the content file. */
const timed = content.chests.find((c) => c.unlock)!;
const rules = timed.unlock!;
const skip = rules.skip!;
type App = Awaited<ReturnType<typeof chestsApp>>;

/** The demo content with a 1-second timer, no skip, and two unlock slots. */
function shortTimers(): AppContent {
  const c: AppContent = structuredClone(content);
  c.chests.find((ch) => ch.id === timed.id)!.unlock = { seconds: 1 };
  c.players.unlock_slots = 2;
  return c;
}

// Time-locked chests on the service tier: chests alone, called over chests.v1.unlock, the skip
// currency held by the wallet stand-in and the declared profile answered by the players stand-in.
// The timer in content, catalog and inventory as rendered, a locked chest refused through the
// gateway, and the gateway's validation of an unlock are end to end: test/e2e/chests/time-locked.test.ts.
describe('time-locked chests (service tier)', () => {
  let run: ChestsTierRun;
  let tier: ChestsTier;
  let app: App;
  let shortApp: App;
  beforeAll(async () => {
    // A crashed skip's debit is stale after 2 s, and the sweeper looks every 200 ms.
    run = await startChestsTier({ PURCHASE_STALE_MS: '2000', PURCHASE_SWEEP_INTERVAL_MS: '200' });
    tier = run.tier;
    [app, shortApp] = await Promise.all([chestsApp(tier), chestsApp(tier, { content: shortTimers() })]);
  });
  afterAll(async () => tier?.close());

  /** A player of `a` with the starter chest and `n` time-locked chests, declaring a profile (default: one that passes the gate of a paid skip). */
  async function playerWith(n: number, a: App = app, profile = { country: 'DE', birthYear: 1990 as number | null }) {
    const {
      playerId,
      chests: [starter],
    } = await grantedChests(tier, a.appId, { source: 'welcome' });
    run.profiles.set(playerId, profile);
    const { chests } = n ? await grantedChests(tier, a.appId, { playerId, chestTypeId: timed.id, n }) : { chests: [] };
    return { playerId, starter: starter!, chests };
  }
  const unlock = (playerId: string, chestId: string, skipWith?: string, a: App = app) =>
    tier.bus.request(UnlockChest, { chestId, ...(skipWith ? { skipWith } : {}) }, callOf(a.appId, playerId));
  const give = (playerId: string, currency: string, amount: number) =>
    run.wallet.credit(playerId, currency, run.wallet.balance(playerId, currency) + amount);
  const gemsOf = (playerId: string) => run.wallet.balance(playerId, skip.currency);
  const lockOf = async (playerId: string, chestId: string, a: App = app) =>
    (
      await tier.bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' }, callOf(a.appId, playerId))
    ).chests.find((c) => c.id === chestId)?.lock;
  const skipDebits = (playerId: string) =>
    [...run.wallet.debits.entries()].filter(([ref, d]) => ref.startsWith('unlock:') && d.playerId === playerId).map(([, d]) => d);
  const skipPayments = (chestIds: string[]) =>
    chestsSql<{ status: string }>(tier, "SELECT status FROM payments WHERE kind = 'skip' AND chest_id = ANY($1::uuid[]) ORDER BY created_at", [
      chestIds,
    ]);
  const refusal = (kind: string, code: string) => ({ kind, errors: [{ code }] });
  const locked = { state: 'locked', unlocksAt: null };

  it('skips a timer for ceil(remaining minutes × per_minute), once, and frees the slot', async () => {
    const { playerId, chests } = await playerWith(3);
    const [running, notStarted, waiting] = chests as [string, string, string];
    give(playerId, skip.currency, 500);
    const gems = gemsOf(playerId);

    await unlock(playerId, running);
    const remaining = (
      await chestsSql<{ s: number }>(tier, 'SELECT extract(epoch FROM unlocks_at - now())::float8 AS s FROM inventory_chests WHERE id = $1', [
        running,
      ])
    )[0]!.s;
    const skipped = await unlock(playerId, running, skip.currency);
    const price = skipped.charged!.amount;
    // Charged for what was left, a moment before the skip: within a minute's price of it.
    expect(price).toBeGreaterThanOrEqual(skipPrice(remaining - 60, skip.per_minute));
    expect(price).toBeLessThanOrEqual(skipPrice(remaining, skip.per_minute));
    expect(skipped.chest.lock!.state).toBe('unlocked');
    expect(Number(skipped.charged!.balance)).toBe(gems - price);
    expect(gemsOf(playerId)).toBe(gems - price);

    // Not started: the whole timer's price. The skip needs no slot.
    const full = await unlock(playerId, notStarted, skip.currency);
    expect(full.charged).toMatchObject({ currency: skip.currency, amount: skipPrice(rules.seconds, skip.per_minute) });
    // Unlocked already: nothing charged, same answer.
    const again = await unlock(playerId, notStarted, skip.currency);
    expect([again.charged, again.chest.lock!.state]).toEqual([undefined, 'unlocked']);
    expect(gemsOf(playerId)).toBe(gems - price - skipPrice(rules.seconds, skip.per_minute));
    expect(skipDebits(playerId).map((d) => [d.amount, d.refunded])).toEqual([
      [price, false],
      [skipPrice(rules.seconds, skip.per_minute), false],
    ]);

    // The slot is free again, and the skipped chests open.
    expect((await unlock(playerId, waiting)).chest.lock!.state).toBe('unlocking');
    for (const id of [running, notStarted]) expect((await openChest(tier, app.appId, playerId, id)).chestId).toBe(id);
  });

  it('runs real timers: two slots, a third waits, and each opens once its second has passed', async () => {
    const { playerId, chests } = await playerWith(3, shortApp);
    const [a, b, c] = chests as [string, string, string];
    // No skip in this app's rules.
    await expect(unlock(playerId, a, 'gems', shortApp)).rejects.toMatchObject(refusal('conflict', 'unlock_skip_unavailable'));
    const [ra, rb] = await Promise.all([unlock(playerId, a, undefined, shortApp), unlock(playerId, b, undefined, shortApp)]);
    expect([ra.chest.lock!.state, rb.chest.lock!.state]).toEqual(['unlocking', 'unlocking']);
    await expect(unlock(playerId, c, undefined, shortApp)).rejects.toMatchObject(refusal('conflict', 'unlock_slot_busy'));
    await expect.poll(() => lockOf(playerId, a, shortApp), { timeout: 5000 }).toEqual({ state: 'unlocked', unlocksAt: ra.chest.lock!.unlocksAt });
    for (const id of [a, b]) expect((await openChest(tier, shortApp.appId, playerId, id)).chestId).toBe(id);
    expect((await unlock(playerId, c, undefined, shortApp)).chest.lock!.state).toBe('unlocking');
  });

  it('lets one of concurrent timer starts take the last slot, and one of concurrent skips pay', async () => {
    const { playerId, chests } = await playerWith(4);
    const starts = await Promise.allSettled(chests.slice(0, 2).map((id) => unlock(playerId, id)));
    expect(starts.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((starts.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject(refusal('conflict', 'unlock_slot_busy'));

    give(playerId, skip.currency, 1000);
    const gems = gemsOf(playerId);
    const target = chests[3]!;
    // Ten skips at once, three times over (the race it proves closed lost 2 runs in 6 with 3 skips).
    const skips = await Promise.all(Array.from({ length: 10 }, () => unlock(playerId, target, skip.currency)));
    const charged = skips.flatMap((r) => (r.charged ? [r.charged.amount] : []));
    expect(charged).toEqual([skipPrice(rules.seconds, skip.per_minute)]);
    expect(gemsOf(playerId)).toBe(gems - charged[0]!);
    expect((await skipPayments([target])).map((d) => d.status)).toEqual(['completed']);
    // Exactly one debit in the wallet: none that a refund undid later.
    expect(skipDebits(playerId).map((d) => [d.amount, d.refunded])).toEqual([[charged[0]!, false]]);
    for (const r of skips) expect(r.chest.lock!.state).toBe('unlocked');

    // More rounds of the race on fresh chests: each one skip paid, once.
    const { chests: more } = await grantedChests(tier, app.appId, { playerId, chestTypeId: timed.id, n: 2 });
    for (const id of more) {
      const round = await Promise.all(Array.from({ length: 10 }, () => unlock(playerId, id, skip.currency)));
      expect(round.filter((r) => r.charged).length).toBe(1);
      expect(await skipPayments([id])).toHaveLength(1);
    }
  });

  it('refuses a paid skip to a player the compliance gate refuses (403, nothing debited, still locked); a free skip currency is not gated', async () => {
    const blocked = await playerWith(1, app, { country: 'BE', birthYear: 1990 });
    const chest = blocked.chests[0]!;
    give(blocked.playerId, skip.currency, 100);
    const gems = gemsOf(blocked.playerId);
    await expect(unlock(blocked.playerId, chest, skip.currency)).rejects.toMatchObject({
      kind: 'forbidden',
      errors: [{ code: 'blocked_in_region', meta: { reason: 'country_blocked' } }],
    });
    const minor = await playerWith(1, app, { country: 'DE', birthYear: new Date().getUTCFullYear() - 10 });
    const minorChest = minor.chests[0]!;
    await expect(unlock(minor.playerId, minorChest, skip.currency)).rejects.toMatchObject(refusal('forbidden', 'age_restricted'));
    expect(gemsOf(blocked.playerId)).toBe(gems);
    expect(await lockOf(blocked.playerId, chest)).toEqual(locked);
    expect(await lockOf(minor.playerId, minorChest)).toEqual(locked);
    expect(await skipPayments([chest, minorChest])).toEqual([]);
    // Starting the timer costs nothing: not gated.
    expect((await unlock(blocked.playerId, chest)).chest.lock!.state).toBe('unlocking');

    // The same chest skipped with coins (free in the demo) is not gated.
    const coinSkips = structuredClone(content);
    coinSkips.chests.find((ch) => ch.id === timed.id)!.unlock = { seconds: 3600, skip: { currency: 'coins', per_minute: 1 } };
    const coinApp = await chestsApp(tier, { content: coinSkips });
    const free = await playerWith(1, coinApp, { country: 'BE', birthYear: null });
    give(free.playerId, 'coins', 1500);
    const paid = await unlock(free.playerId, free.chests[0]!, 'coins', coinApp);
    expect(paid.charged).toMatchObject({ currency: 'coins', amount: 60 });
    expect(paid.chest.lock!.state).toBe('unlocked');
  });

  it('settles a crash between the skip debit and the unlock: the sweeper refunds it and the chest stays locked', async () => {
    const { playerId, chests } = await playerWith(1);
    give(playerId, skip.currency, 100);
    const gems = gemsOf(playerId);
    const crashed = randomUUID();
    await chestsSql(
      tier,
      "INSERT INTO payments (id, kind, app_id, player_id, chest_id, currency, amount, status) VALUES ($1, 'skip', $2, $3, $4, $5, 60, 'debited')",
      [crashed, app.appId, playerId, chests[0], skip.currency],
    );
    await tier.bus.request(
      DebitCurrency,
      { playerId, currency: skip.currency, amount: '60', reference: `unlock:${crashed}` },
      { requestId: 'test', appId: app.appId, playerId },
    );
    expect(gemsOf(playerId)).toBe(gems - 60);
    await expect
      .poll(
        async () =>
          (await chestsSql<{ status: string }>(tier, "SELECT status FROM payments WHERE kind = 'skip' AND id = $1", [crashed])).map((r) => r.status),
        {
          timeout: 15_000,
        },
      )
      .toEqual(['refunded']);
    expect(gemsOf(playerId)).toBe(gems);
    expect(await lockOf(playerId, chests[0]!)).toEqual(locked);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppContentSchema, DebitCurrency, readContentFile, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';
import { skipPrice } from '../src/opening/unlock-chest.js';
import { appIdOf, createApp, defaultCatalogIds, get, grantChests, inventory, open, sql, studioGrant, wallet, type Player } from './support/chests.js';
import { registerDeclaring } from './support/compliance.js';

const content = readContentFile();
/** The demo's time-locked chest type, and its rules, from the content file. */
const timed = content.chests.find((c) => c.unlock)!;
const rules = timed.unlock!;
const skip = rules.skip!;

/** The demo content with a 1-second timer, no skip, and two unlock slots. */
function shortTimers(): AppContent {
  const c: AppContent = structuredClone(content);
  c.chests.find((ch) => ch.id === timed.id)!.unlock = { seconds: 1 };
  c.players.unlock_slots = 2;
  return c;
}

describe('time-locked chests', () => {
  let stack: TestStack;
  let appId: string;
  let shortApp: { appId: string; publishableKey: string };

  beforeAll(async () => {
    // A crashed skip's debit is stale after 500 ms, and the sweeper looks every 200 ms.
    stack = await startStack({ env: { PURCHASE_STALE_MS: '2000', PURCHASE_SWEEP_INTERVAL_MS: '200' } });
    appId = await appIdOf(stack);
    shortApp = await createApp(stack, shortTimers());
  });
  afterAll(async () => stack?.close());

  const unlock = (p: Player, chestId: string, skipWith?: string) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/chests/${chestId}/unlock`,
      headers: jsonApiHeaders(p.apiKey, p.token),
      ...(skipWith ? { payload: { data: { type: 'unlock', attributes: { skip_with: skipWith } } } } : {}),
    });
  /** An unlock answered 200: the JSON:API document. */
  const unlocked = async (p: Player, chestId: string, skipWith?: string) => {
    const res = await unlock(p, chestId, skipWith);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expectJsonApi(body);
    return body;
  };
  /**
   * A player of `app` with `n` time-locked chests (and their starter chest), who declared a country
   * and birth year that pass the compliance gate of a paid skip (gems are paid in the demo).
   */
  async function playerWith(n: number, app?: { publishableKey: string }): Promise<{ player: Player; chests: string[] }> {
    const player = await registerDeclaring(stack, { country: 'DE', birth_year: 1990 }, 'register', app?.publishableKey);
    await eventually(async () => expect((await inventory(stack, player)).meta.total_chests).toBe(1), 20_000);
    return { player, chests: await grantChests(stack, player, timed.id, n) };
  }
  const gemsOf = async (p: Player) => Number((await wallet(stack, p))[skip.currency]!.balance);
  const lockOf = async (p: Player, chestId: string) =>
    (await inventory(stack, p)).data.find((c: { id: string }) => c.id === chestId)?.meta.lock as
      { state: string; unlocks_at: string | null } | undefined;
  const openedAt = async (chestId: string) =>
    (await sql<{ opened_at: Date | null }>(stack, 'SELECT opened_at FROM chests.inventory_chests WHERE id = $1', [chestId]))[0]!.opened_at;

  it('validates the timer in content, and shows it in the catalog and on inventory chests', async () => {
    expect(AppContentSchema.parse({ ...content, players: { ...content.players, unlock_slots: undefined } }).players.unlock_slots).toBe(1);
    const withUnlock = (unlock: unknown) => ({ ...content, chests: content.chests.map((c) => (c.id === timed.id ? { ...c, unlock } : c)) });
    for (const bad of [
      { seconds: 0 },
      { seconds: 1.5 },
      { seconds: 60, skip: { currency: 'no_such', per_minute: 1 } },
      { seconds: 60, skip: { currency: 'gems', per_minute: 0 } },
    ]) {
      expect(AppContentSchema.safeParse(withUnlock(bad)).success, JSON.stringify(bad)).toBe(false);
    }
    const ids = await defaultCatalogIds(stack);
    const catalog = (await get(stack, '/api/v1/chests?page[limit]=100')).json();
    for (const c of catalog.data as { id: string; meta: { unlock?: unknown } }[]) {
      const type = content.chests.find((t) => ids[t.name] === c.id)!;
      expect(c.meta.unlock, type.id).toEqual(type.unlock ? { seconds: type.unlock.seconds, skip: type.unlock.skip } : undefined);
    }

    const { player, chests } = await playerWith(1);
    const inv = (await inventory(stack, player)).data as { id: string; meta: { lock?: unknown } }[];
    expect(inv.find((c) => c.id === chests[0])!.meta.lock).toEqual({ state: 'locked', unlocks_at: null });
    expect(inv.find((c) => c.id === player.starterChestId)!.meta.lock).toBeUndefined();
  });

  it('refuses to open a locked chest (403 chest_locked, nothing changes); starts its timer once; holds a second to the slot', async () => {
    const { player, chests } = await playerWith(2);
    const [first, second] = chests as [string, string];
    const refused = expectError(await open(stack, player, first), 403, 'chest_locked');
    expect((refused[0] as { meta?: unknown }).meta).toEqual({ unlocks_at: null });
    expect(await openedAt(first)).toBeNull();

    const before = Date.now();
    const started = await unlocked(player, first);
    expect(started.data.id).toBe(first);
    expect(started.meta).toEqual({});
    const lock = started.data.meta.lock;
    expect(lock.state).toBe('unlocking');
    const endsIn = Date.parse(lock.unlocks_at) - before;
    expect(endsIn).toBeGreaterThan(rules.seconds * 1000 - 5000);
    expect(endsIn).toBeLessThanOrEqual(rules.seconds * 1000 + 5000);
    // A retry changes nothing; the inventory shows the same timer.
    expect((await unlocked(player, first)).data.meta.lock).toEqual(lock);
    expect(await lockOf(player, first)).toEqual(lock);

    const stillLocked = expectError(await open(stack, player, first), 403, 'chest_locked');
    expect((stillLocked[0] as { meta?: unknown }).meta).toEqual({ unlocks_at: lock.unlocks_at });
    // One slot (the demo's default): a second timer waits.
    const busy = expectError(await unlock(player, second), 409, 'unlock_slot_busy');
    expect((busy[0] as { meta?: unknown }).meta).toEqual({ unlock_slots: 1, next_free_at: lock.unlocks_at });
    expect(await lockOf(player, second)).toEqual({ state: 'locked', unlocks_at: null });
    // A batch naming a locked chest opens none of them.
    const batch = await stack.inject({
      method: 'POST',
      url: '/api/v1/chests/open',
      headers: jsonApiHeaders(player.apiKey, player.token),
      payload: {
        data: [
          { type: 'chest', id: player.starterChestId },
          { type: 'chest', id: second },
        ],
      },
    });
    const errors = expectError(batch, 403, 'chest_locked');
    expect((errors[0] as { source?: unknown }).source).toEqual({ pointer: '/data/1/id' });
    expect(await openedAt(player.starterChestId)).toBeNull();
  });

  it('skips a timer for ceil(remaining minutes × per_minute), once, and frees the slot', async () => {
    const { player, chests } = await playerWith(3);
    const [running, notStarted, waiting] = chests as [string, string, string];
    await studioGrant(stack, player, skip.currency, '500');
    const gems = await gemsOf(player);

    await unlocked(player, running);
    const remaining = (
      await sql<{ s: number }>(stack, 'SELECT extract(epoch FROM unlocks_at - now())::float8 AS s FROM chests.inventory_chests WHERE id = $1', [
        running,
      ])
    )[0]!.s;
    const skipped = await unlocked(player, running, skip.currency);
    const price = skipped.meta.price_paid[skip.currency] as number;
    // Charged for what was left, a moment before the skip: within a minute's price of it.
    expect(price).toBeGreaterThanOrEqual(skipPrice(remaining - 60, skip.per_minute));
    expect(price).toBeLessThanOrEqual(skipPrice(remaining, skip.per_minute));
    expect(skipped.data.meta.lock.state).toBe('unlocked');
    expect(Number(skipped.meta.balance[skip.currency])).toBe(gems - price);
    expect(await gemsOf(player)).toBe(gems - price);

    // Not started: the whole timer's price. The skip needs no slot.
    const full = await unlocked(player, notStarted, skip.currency);
    expect(full.meta.price_paid).toEqual({ [skip.currency]: skipPrice(rules.seconds, skip.per_minute) });
    // Unlocked already: nothing charged, same answer.
    const again = await unlocked(player, notStarted, skip.currency);
    expect([again.meta, again.data.meta.lock.state]).toEqual([{}, 'unlocked']);
    expect(await gemsOf(player)).toBe(gems - price - skipPrice(rules.seconds, skip.per_minute));
    const ledger = await sql<{ reference: string; delta: string }>(
      stack,
      "SELECT reference, delta::text FROM wallet.ledger WHERE player_id = $1 AND reference LIKE 'unlock:%' ORDER BY created_at",
      [player.id],
    );
    expect(ledger.map((l) => Number(l.delta))).toEqual([-price, -skipPrice(rules.seconds, skip.per_minute)]);

    // The slot is free again, and the skipped chests open.
    expect((await unlocked(player, waiting)).data.meta.lock.state).toBe('unlocking');
    for (const id of [running, notStarted]) expect((await open(stack, player, id)).statusCode).toBe(200);
  });

  it('refuses bad skips and unlocks, changing nothing', async () => {
    const { player, chests } = await playerWith(1);
    const chest = chests[0]!;
    const gems = await gemsOf(player);
    expect(gems).toBeLessThan(skipPrice(rules.seconds, skip.per_minute));
    expectError(await unlock(player, chest, skip.currency), 409, 'insufficient_funds');
    const wrong = expectError(await unlock(player, chest, 'coins'), 422, 'skip_currency_mismatch');
    expect((wrong[0] as { meta?: unknown }).meta).toEqual({ currency: skip.currency });
    expect(await gemsOf(player)).toBe(gems);
    expect(await lockOf(player, chest)).toEqual({ state: 'locked', unlocks_at: null });
    const debits = await sql<{ status: string }>(stack, "SELECT status FROM chests.payments WHERE kind = 'skip' AND chest_id = $1", [chest]);
    expect(debits.map((d) => d.status)).toEqual(['failed']);

    expectError(await unlock(player, player.starterChestId), 409, 'chest_not_time_locked');
    expectError(await unlock(player, randomUUID()), 404, 'chest_not_found');
    const other = await playerWith(0);
    expectError(await unlock(other.player, chest), 403, 'chest_not_owned');
    const bad = (payload: unknown) =>
      stack.inject({
        method: 'POST',
        url: `/api/v1/chests/${chest}/unlock`,
        headers: jsonApiHeaders(player.apiKey, player.token),
        payload: JSON.stringify(payload),
      });
    expect((await bad({ data: { type: 'chest', attributes: { skip_with: 'gems' } } })).statusCode).toBe(422);
    expect((await bad({ data: { type: 'unlock', attributes: { skip_with: 'gems', extra: 1 } } })).statusCode).toBe(422);
    const anonymous = await stack.inject({ method: 'POST', url: `/api/v1/chests/${chest}/unlock`, headers: { apikey: player.apiKey } });
    expectError(anonymous, 401, 'missing_token');
    expect(await lockOf(player, chest)).toEqual({ state: 'locked', unlocks_at: null });

    await open(stack, player, player.starterChestId);
    expectError(await unlock(player, player.starterChestId), 403, 'chest_already_opened');
  });

  it('runs real timers: two slots, a third waits, and each opens once its second has passed', async () => {
    const { player, chests } = await playerWith(3, shortApp);
    const [a, b, c] = chests as [string, string, string];
    // No skip in this app's rules.
    expectError(await unlock(player, a, 'gems'), 409, 'unlock_skip_unavailable');
    const [ra, rb] = await Promise.all([unlocked(player, a), unlocked(player, b)]);
    expect([ra.data.meta.lock.state, rb.data.meta.lock.state]).toEqual(['unlocking', 'unlocking']);
    expectError(await unlock(player, c), 409, 'unlock_slot_busy');
    await eventually(async () => expect(await lockOf(player, a)).toEqual({ state: 'unlocked', unlocks_at: ra.data.meta.lock.unlocks_at }), 5000);
    for (const id of [a, b]) expect((await open(stack, player, id)).statusCode).toBe(200);
    expect((await unlocked(player, c)).data.meta.lock.state).toBe('unlocking');
  });

  it('lets one of concurrent timer starts take the last slot, and one of concurrent skips pay', async () => {
    const { player, chests } = await playerWith(4);
    const starts = await Promise.all(chests.slice(0, 2).map((id) => unlock(player, id)));
    expect(starts.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expectError(
      starts.find((r) => r.statusCode === 409)!,
      409,
      'unlock_slot_busy',
    );

    await studioGrant(stack, player, skip.currency, '1000');
    const gems = await gemsOf(player);
    const target = chests[3]!;
    // Ten skips at once, three times over (the race it proves closed lost 2 runs in 6 with 3 skips).
    const skips = await Promise.all(Array.from({ length: 10 }, () => unlock(player, target, skip.currency)));
    expect(skips.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    const charged = skips.map((r) => r.json().meta.price_paid?.[skip.currency] as number | undefined).filter((n) => n !== undefined);
    expect(charged).toEqual([skipPrice(rules.seconds, skip.per_minute)]);
    await eventually(async () => expect(await gemsOf(player)).toBe(gems - charged[0]!));
    const debits = await sql<{ status: string }>(stack, "SELECT status FROM chests.payments WHERE kind = 'skip' AND chest_id = $1", [target]);
    expect(debits.map((d) => d.status)).toEqual(['completed']);
    // Exactly one movement in the wallet's ledger: no debit that a refund undid later.
    const ledger = await sql<{ delta: string }>(stack, "SELECT delta::text FROM wallet.ledger WHERE player_id = $1 AND reference LIKE 'unlock:%'", [
      player.id,
    ]);
    expect(ledger.map((l) => Number(l.delta))).toEqual([-charged[0]!]);
    for (const r of skips) expect(r.json().data.meta.lock.state).toBe('unlocked');

    // More rounds of the race on fresh chests: each one skip paid, once.
    const more = await grantChests(stack, player, timed.id, 2);
    for (const id of more) {
      const round = await Promise.all(Array.from({ length: 10 }, () => unlock(player, id, skip.currency)));
      expect(round.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
      expect(round.filter((r) => r.json().meta.price_paid).length).toBe(1);
      const rows = await sql<{ n: number }>(stack, "SELECT count(*)::int AS n FROM chests.payments WHERE kind = 'skip' AND chest_id = $1", [id]);
      expect(rows[0]!.n).toBe(1);
    }
  });

  it('refuses a paid skip to a player the compliance gate refuses (403, nothing debited, still locked); a free skip currency is not gated', async () => {
    const blocked = await registerDeclaring(stack, { country: 'BE', birth_year: 1990 }, 'register');
    await eventually(async () => expect((await inventory(stack, blocked)).meta.total_chests).toBe(1), 20_000);
    const [chest] = await grantChests(stack, blocked, timed.id, 1);
    await studioGrant(stack, blocked, skip.currency, '100');
    const gems = await gemsOf(blocked);
    const refused = expectError(await unlock(blocked, chest!, skip.currency), 403, 'blocked_in_region');
    expect((refused[0] as { meta?: { reason?: string } }).meta?.reason).toBe('country_blocked');
    const minor = await registerDeclaring(stack, { country: 'DE', birth_year: new Date().getUTCFullYear() - 10 }, 'register');
    await eventually(async () => expect((await inventory(stack, minor)).meta.total_chests).toBe(1), 20_000);
    const [minorChest] = await grantChests(stack, minor, timed.id, 1);
    expectError(await unlock(minor, minorChest!, skip.currency), 403, 'age_restricted');
    expect(await gemsOf(blocked)).toBe(gems);
    expect(await lockOf(blocked, chest!)).toEqual({ state: 'locked', unlocks_at: null });
    expect(await lockOf(minor, minorChest!)).toEqual({ state: 'locked', unlocks_at: null });
    const none = await sql(stack, "SELECT 1 FROM chests.payments WHERE kind = 'skip' AND chest_id = ANY($1::uuid[])", [[chest, minorChest]]);
    expect(none).toEqual([]);
    // Starting the timer costs nothing: not gated.
    expect((await unlocked(blocked, chest!)).data.meta.lock.state).toBe('unlocking');

    // The same chest skipped with coins (free in the demo) is not gated.
    const coinSkips = structuredClone(content);
    coinSkips.chests.find((ch) => ch.id === timed.id)!.unlock = { seconds: 3600, skip: { currency: 'coins', per_minute: 1 } };
    const coinApp = await createApp(stack, coinSkips);
    const free = await registerDeclaring(stack, { country: 'BE' }, 'register', coinApp.publishableKey);
    await eventually(async () => expect((await inventory(stack, free)).meta.total_chests).toBe(1), 20_000);
    const [coinChest] = await grantChests(stack, free, timed.id, 1);
    const paid = await unlocked(free, coinChest!, 'coins');
    expect(paid.meta.price_paid).toEqual({ coins: 60 });
    expect(paid.data.meta.lock.state).toBe('unlocked');
  });

  it('settles a crash between the skip debit and the unlock: the sweeper refunds it and the chest stays locked', async () => {
    const { player, chests } = await playerWith(1);
    await studioGrant(stack, player, skip.currency, '100');
    const gems = await gemsOf(player);
    const crashed = randomUUID();
    await sql(
      stack,
      "INSERT INTO chests.payments (id, kind, app_id, player_id, chest_id, currency, amount, status) VALUES ($1, 'skip', $2, $3, $4, $5, 60, 'debited')",
      [crashed, appId, player.id, chests[0], skip.currency],
    );
    await stack.bus.request(
      DebitCurrency,
      { playerId: player.id, currency: skip.currency, amount: '60', reference: `unlock:${crashed}` },
      { requestId: 'test', appId, playerId: player.id },
    );
    expect(await gemsOf(player)).toBe(gems - 60);
    await eventually(async () => {
      const rows = await sql<{ status: string }>(stack, "SELECT status FROM chests.payments WHERE kind = 'skip' AND id = $1", [crashed]);
      expect(rows.map((r) => r.status)).toEqual(['refunded']);
    }, 15_000);
    expect(await gemsOf(player)).toBe(gems);
    expect(await lockOf(player, chests[0]!)).toEqual({ state: 'locked', unlocks_at: null });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppContentSchema, readContentFile } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { skipPrice } from '../../../services/chests/src/payments/skip-saga.js';
import { defaultCatalogIds, get, grantChests, inventory, open, sql, wallet, type Player } from '../../../services/chests/test/support/chests.js';
import { registerDeclaring } from '../../../services/chests/test/support/compliance.js';

const content = readContentFile();
/** The demo's time-locked chest type, and its rules, from the content file. */
const timed = content.chests.find((c) => c.unlock)!;
const rules = timed.unlock!;
const skip = rules.skip!;

// Time-locked chests through the gateway: the timer in content, catalog and inventory as rendered,
// a locked chest refused (alone and in a batch), and an unlock's refusals with the gateway's
// validation. Skips, slots, real timers, the compliance gate of a paid skip and the sweeper are
// chests' own (services/chests/test/time-locked.test.ts, service tier).
describe('time-locked chests', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // A skip's payment is stale after 2 s, and the sweeper looks every 200 ms (as on the service tier).
    stack = await startStack({ env: { PURCHASE_STALE_MS: '2000', PURCHASE_SWEEP_INTERVAL_MS: '200' } });
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

  it('refuses bad skips and unlocks, changing nothing', async () => {
    const { player, chests } = await playerWith(1);
    const chest = chests[0]!;
    const gems = await gemsOf(player);
    expect(gems).toBeLessThan(skipPrice(rules.seconds, skip.per_minute));
    // What the skip would have cost and what the player holds, so a client can offer a top-up (the timer has not started: its full length).
    const poor = expectError(await unlock(player, chest, skip.currency), 409, 'insufficient_funds');
    const cost = skipPrice(rules.seconds, skip.per_minute);
    expect((poor[0] as { meta?: unknown }).meta).toEqual({
      currency: skip.currency,
      amount: cost,
      required: cost.toFixed(2),
      balance: gems.toFixed(2),
    });
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
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { AdminLoadContent, readContentFile, type AppContent, chestTypeId } from '@ccs/shared';
import { withoutOddsNotice } from '@ccs/shared/testing';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import {
  createApp,
  get,
  grantChests,
  open,
  registerPlayer,
  sql,
  waitForStarterChest,
  type Player,
} from '../../../services/chests/test/support/chests.js';

const HOUR = 3_600_000;
type Rules = AppContent['chests'][number]['rules'];

/** The default content with `hours` of odds change notice (absent: none, the KR rule pack left out too), without its banner (test/e2e/banners/odds-log.test.ts logs banners). */
function contentWith(hours?: number): AppContent {
  const c = withoutOddsNotice(structuredClone(readContentFile()));
  delete c.banners;
  if (hours !== undefined) c.compliance = { ...c.compliance!, odds_change_notice_hours: hours };
  return c;
}

/** `base` with the wooden chest's rules replaced: every item of `rarity` (a 100 % distribution). */
function onlyRarity(base: AppContent, rarity: string): AppContent {
  const c = structuredClone(base);
  const wooden = c.chests.find((ch) => ch.id === 'wooden-chest')!;
  wooden.rules = { ...wooden.rules, rarity_weights: { common: 0, rare: 0, legendary: 0, [rarity]: 1 } } as Rules;
  return c;
}

// Odds change notice periods (docs/design.md §7, docs/compliance.md): with
// compliance.odds_change_notice_hours = N, new rules for a chest type already in the catalog take
// effect N hours after the load; until then every opening rolls the old rules, the catalog says
// meta.odds_change, and the odds document discloses the rules that roll. Through the running stack.
describe('odds change notice periods', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  /** An app of its own with `content`, a player of it, and its wooden chest's catalog id. */
  async function appWith(content: AppContent) {
    const app = await createApp(stack, content);
    const player = await registerPlayer(stack, app.publishableKey);
    await waitForStarterChest(stack, player);
    return { app, player, wooden: chestTypeId(app.appId, 'wooden-chest') };
  }

  const load = async (appId: string, content: AppContent) => {
    const before = Date.now();
    const { version } = await stack.bus.request(AdminLoadContent, { appId, content }, { requestId: randomUUID() });
    return { version, before };
  };

  const read = async (url: string, apiKey: string, token?: string) => {
    const res = await get(stack, url, token, apiKey);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return body;
  };

  /** The app's odds log once it holds `n` entries (the chests service applies a load moments after it). */
  const logWith = (apiKey: string, n: number) =>
    eventually(async () => {
      const body = await read('/api/v1/odds-log?page[limit]=100', apiKey);
      expect(body.meta.total_count).toBe(n);
      expect(body.data).toHaveLength(n);
      return body.data as { id: string; attributes: { chest_type_id: string; rules_version: number; effective_at: string } }[];
    }, 20_000);

  /** The catalog chest, once its meta.odds_change reads as `expected` (the gateway's reply cache lives a second). */
  const catalogChest = (apiKey: string, id: string, expected: unknown) =>
    eventually(async () => {
      const one = await read(`/api/v1/chests/${id}`, apiKey);
      expect(one.data.meta.odds_change).toEqual(expected);
      const list = await read('/api/v1/chests?page[limit]=100', apiKey);
      expect(list.data.find((c: { id: string }) => c.id === id).meta.odds_change).toEqual(expected);
      return one.data;
    });

  /** Opens chests (single opens and one batch) and returns each opening's rules version and rarities, from the caller's openings. */
  async function openAll(p: Player, chests: string[]) {
    const [first, ...rest] = chests;
    expect((await open(stack, p, first!)).statusCode).toBe(200);
    if (rest.length) {
      const res = await stack.inject({
        method: 'POST',
        url: '/api/v1/chests/open',
        headers: jsonApiHeaders(p.apiKey, p.token),
        payload: { data: rest.map((id) => ({ type: 'chest', id })) },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const body = await read('/api/v1/players/me/openings?page[limit]=100', p.apiKey, p.token);
    const mine = body.data.filter((o: { attributes: { chest_id: string } }) => chests.includes(o.attributes.chest_id));
    expect(mine).toHaveLength(chests.length);
    return mine.map((o: { attributes: { rules_version: number; collectibles: { attributes: { rarity: string } }[] } }) => ({
      rulesVersion: o.attributes.rules_version,
      rarities: o.attributes.collectibles.map((c) => c.attributes.rarity),
    }));
  }

  it('keeps the old rules rolling for N hours after a change, discloses them, announces the change, and lets a newer load replace or cancel it', async () => {
    const v1 = contentWith(24);
    const { app, player, wooden } = await appWith(v1);
    const key = app.publishableKey;
    // Version 1: every chest type is new, in force at once.
    const first = await logWith(key, v1.chests.length);
    for (const e of first) expect(Date.parse(e.attributes.effective_at)).toBeLessThanOrEqual(Date.now());

    // Version 2: the wooden chest gives only legendaries, and a new chest type appears.
    const v2 = onlyRarity(v1, 'legendary');
    v2.chests.push({ ...structuredClone(v2.chests.find((c) => c.id === 'wooden-chest')!), id: 'new-chest', name: 'New Chest' });
    const l2 = await load(app.appId, v2);
    const second = await logWith(key, v1.chests.length + 2);
    const seen2 = Date.now();
    const [changed, added] = second.slice(-2).map((e) => e.attributes);
    expect(changed).toMatchObject({ chest_type_id: wooden, rules_version: l2.version });
    const effective = Date.parse(changed!.effective_at);
    expect(effective).toBeGreaterThanOrEqual(l2.before + 24 * HOUR);
    expect(effective).toBeLessThanOrEqual(seen2 + 24 * HOUR);
    // A new chest type takes effect at once, whatever the notice period.
    expect(added).toMatchObject({ chest_type_id: chestTypeId(app.appId, 'new-chest'), rules_version: l2.version });
    expect(Date.parse(added!.effective_at)).toBeLessThanOrEqual(seen2);
    await catalogChest(key, chestTypeId(app.appId, 'new-chest'), undefined);

    // The catalog announces the change; the odds document discloses the rules that roll now.
    await catalogChest(key, wooden, { effective_at: changed!.effective_at, rules_version: l2.version });
    const odds = await read(`/api/v1/chests/${wooden}/odds`, key);
    expect(odds.data.attributes.rules_version).toBe(1);
    expect(odds.data.attributes.rules).toEqual(JSON.parse(JSON.stringify(v1.chests.find((c) => c.id === 'wooden-chest')!.rules)));
    expect(odds.meta.odds_change).toEqual({ effective_at: changed!.effective_at, rules_version: l2.version });
    // The coming rules are published too.
    const coming = await read(`/api/v1/chests/${wooden}/odds?rules_version=${l2.version}`, key);
    const drawn = coming.data.attributes.rarities.filter((r: { probability: number | string }) => Number(r.probability) > 0);
    expect(drawn.map((r: { rarity: string }) => r.rarity)).toEqual(['legendary']);

    // Openings (a chest owned before the load, single and batch) still roll version 1's rules.
    const before = await openAll(player, [player.starterChestId, ...(await grantChests(stack, player, 'wooden-chest', 3))]);
    expect(before.map((o: { rulesVersion: number }) => o.rulesVersion)).toEqual([1, 1, 1, 1]);
    expect(before.flatMap((o: { rarities: string[] }) => o.rarities).every((r: string) => r === 'legendary')).toBe(false);
    // The new chest type rolls its rules at once.
    const fresh = await openAll(player, await grantChests(stack, player, 'new-chest', 1));
    expect(fresh[0]).toEqual({ rulesVersion: l2.version, rarities: ['legendary', 'legendary', 'legendary'] });

    // Version 3, within the notice period, changes the wooden chest again: it replaces the pending
    // change, with its own entry and notice period; version 1 still rolls.
    const v3 = onlyRarity(v2, 'rare');
    const l3 = await load(app.appId, v3);
    const third = await logWith(key, v1.chests.length + 3);
    const replaced = third.at(-1)!.attributes;
    expect(replaced).toMatchObject({ chest_type_id: wooden, rules_version: l3.version });
    expect(Date.parse(replaced.effective_at)).toBeGreaterThanOrEqual(l3.before + 24 * HOUR);
    await catalogChest(key, wooden, { effective_at: replaced.effective_at, rules_version: l3.version });
    const during = await openAll(player, await grantChests(stack, player, 'wooden-chest', 1));
    expect(during[0].rulesVersion).toBe(1);

    // Version 4 reverts to version 1's rules before the change took effect: the log still gets an
    // entry (in force at once: the rules that roll do not change), and nothing is pending any more.
    const v4 = structuredClone(v3);
    v4.chests.find((c) => c.id === 'wooden-chest')!.rules = structuredClone(v1.chests.find((c) => c.id === 'wooden-chest')!.rules);
    const l4 = await load(app.appId, v4);
    const fourth = await logWith(key, v1.chests.length + 4);
    const seen4 = Date.now();
    expect(fourth.at(-1)!.attributes).toMatchObject({ chest_type_id: wooden, rules_version: l4.version });
    expect(Date.parse(fourth.at(-1)!.attributes.effective_at)).toBeLessThanOrEqual(seen4);
    await catalogChest(key, wooden, undefined);
    const reverted = await openAll(player, await grantChests(stack, player, 'wooden-chest', 1));
    expect(reverted[0].rulesVersion).toBe(l4.version);
  });

  it('rolls the new rules once the effective time passes, with no further load: the announcement goes and the odds document follows', async () => {
    const v1 = contentWith(24);
    const { app, player, wooden } = await appWith(v1);
    const key = app.publishableKey;
    await logWith(key, v1.chests.length);
    const l2 = await load(app.appId, onlyRarity(v1, 'legendary'));
    await logWith(key, v1.chests.length + 1);
    // Rather than wait a day, the stored effective time of the pending change is brought forward
    // to a few seconds from now (the log keeps its entry: its hash covers the announced time).
    const [row] = await sql<{ at: Date }>(
      stack,
      `UPDATE chests.chest_types SET pending_effective_at = now() + interval '4 seconds'
        WHERE app_id = $1 AND id = $2 AND pending_version = $3 RETURNING pending_effective_at AS at`,
      [app.appId, wooden, l2.version],
    );
    expect(row).toBeDefined();
    await catalogChest(key, wooden, { effective_at: row!.at.toISOString(), rules_version: l2.version });
    expect((await read(`/api/v1/chests/${wooden}/odds`, key)).data.attributes.rules_version).toBe(1);
    const chests = await grantChests(stack, player, 'wooden-chest', 2);
    expect((await openAll(player, [chests[0]!]))[0].rulesVersion).toBe(1);

    await new Promise((r) => setTimeout(r, Math.max(0, row!.at.getTime() - Date.now()) + 100));
    // In force now: openings (of a chest owned before) roll version 2, the catalog's cached pages
    // drop the announcement, and the odds document discloses version 2.
    expect(await openAll(player, [chests[1]!])).toEqual([{ rulesVersion: l2.version, rarities: ['legendary', 'legendary', 'legendary'] }]);
    await catalogChest(key, wooden, undefined);
    const odds = await read(`/api/v1/chests/${wooden}/odds`, key);
    expect(odds.data.attributes.rules_version).toBe(l2.version);
    expect(odds.meta).toBeUndefined();
  });

  it('takes the notice period from the KR rule pack when the content sets none', async () => {
    const v1 = contentWith();
    v1.compliance = { ...v1.compliance!, rule_packs: ['KR'] };
    const { app, wooden } = await appWith(v1);
    await logWith(app.publishableKey, v1.chests.length);
    const l2 = await load(app.appId, onlyRarity(v1, 'legendary'));
    const entry = (await logWith(app.publishableKey, v1.chests.length + 1)).at(-1)!.attributes;
    expect(entry).toMatchObject({ chest_type_id: wooden, rules_version: l2.version });
    expect(Date.parse(entry.effective_at)).toBeGreaterThanOrEqual(l2.before + 24 * HOUR);
    await catalogChest(app.publishableKey, wooden, { effective_at: entry.effective_at, rules_version: l2.version });
  });

  it('without a notice period, new rules are in force at once, as before', async () => {
    const v1 = contentWith();
    const { app, player, wooden } = await appWith(v1);
    const key = app.publishableKey;
    await logWith(key, v1.chests.length);
    const l2 = await load(app.appId, onlyRarity(v1, 'legendary'));
    const log = await logWith(key, v1.chests.length + 1);
    const seen = Date.now();
    expect(log.at(-1)!.attributes).toMatchObject({ chest_type_id: wooden, rules_version: l2.version });
    expect(Date.parse(log.at(-1)!.attributes.effective_at)).toBeLessThanOrEqual(seen);
    await catalogChest(key, wooden, undefined);
    await eventually(async () => expect((await read(`/api/v1/chests/${wooden}/odds`, key)).data.attributes.rules_version).toBe(l2.version));
    expect(await openAll(player, [player.starterChestId])).toEqual([{ rulesVersion: l2.version, rarities: ['legendary', 'legendary', 'legendary'] }]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';
import { createApp, grantChests, inventory, open, registerPlayer, wallet, type Player } from '../../chests/test/support/chests.js';

/**
 * The admin API (studio scope): the app's secret key only, never a publishable key or a player
 * token; the numbers it shows are the ones the players' own API shows; every action is audited, no read.
 */
describe('admin API', () => {
  let stack: TestStack;
  let game: { appId: string; publishableKey: string; secretKey: string };
  let other: { appId: string; publishableKey: string; secretKey: string };
  let ada: Player;
  let email: string;

  beforeAll(async () => {
    stack = await startStack();
    [game, other] = await Promise.all([createApp(stack), createApp(stack)]);
    ada = await registerPlayer(stack, game.publishableKey);
    await eventually(async () => expect((await inventory(stack, ada)).meta.total_chests).toBe(1), 20_000);
    email = (await admin(game.secretKey, `/api/v1/admin/players/${ada.id}`)).json().data.attributes.email;
    await grantChests(stack, ada, 'silver-chest', 1);
    const opened = await open(stack, ada, ada.starterChestId);
    expect(opened.statusCode, opened.body).toBe(200);
  });
  afterAll(async () => stack?.close());

  const admin = (apiKey: string | undefined, url: string, headers: Record<string, string> = {}) =>
    stack.inject({ method: 'GET', url, headers: { accept: 'application/vnd.api+json', ...(apiKey ? { apikey: apiKey } : {}), ...headers } });
  const ok = async (url: string, apiKey = game.secretKey) => {
    const res = await admin(apiKey, url);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expectJsonApi(body);
    return body;
  };

  it('takes the secret key only: no key 401, a publishable key 403, a Bearer token 401', async () => {
    expectError(await admin(undefined, '/api/v1/admin/overview'), 401, 'missing_api_key');
    expectError(await admin(game.publishableKey, '/api/v1/admin/overview'), 403, 'secret_key_required');
    expectError(await admin(game.secretKey, '/api/v1/admin/overview', { authorization: `Bearer ${ada.token}` }), 401, 'token_not_accepted');
  });

  it("shows the app's figures", async () => {
    const o = (await ok('/api/v1/admin/overview')).data;
    expect(o.id).toBe(game.appId);
    expect(o.attributes.players).toEqual({ total: 1, registered: 1, guests: 0 });
    expect(o.attributes.chests).toEqual({ unopened: 1, opened: 1 });
    expect(o.attributes.openings_last_24h).toBe(1);
    expect(o.attributes.content_versions).toEqual({ chests: 1, collections: 1, wallet: 1 });
    // Hour by hour: 24 hours, the opening in the last one; sources and sinks from the ledger.
    expect(o.attributes.hourly).toHaveLength(24);
    expect(o.attributes.hourly.at(-1).openings).toBe(1);
    expect(o.attributes.hourly.reduce((n: number, h: { openings: number }) => n + h.openings, 0)).toBe(1);
    const flows = o.attributes.currency_flows_24h as { code: string; reason: string; credited: string; debited: string }[];
    expect(flows.find((f) => f.code === 'coins' && f.reason === 'initial_currency')).toMatchObject({ debited: '0.00' });
    expect(Number(flows.find((f) => f.code === 'coins' && f.reason === 'initial_currency')!.credited)).toBeGreaterThan(0);
    const coins = o.attributes.balances.find((b: { code: string }) => b.code === 'coins');
    expect(coins).toMatchObject({ total: (await wallet(stack, ada)).coins!.balance, holders: 1 });
  });

  it('looks a player up by id or email, with the same numbers as their own API', async () => {
    const byId = (await ok(`/api/v1/admin/players/${ada.id}`)).data;
    const byEmail = (await ok(`/api/v1/admin/players/${encodeURIComponent(email.toUpperCase())}`)).data;
    expect(byEmail).toEqual(byId);
    const own = await inventory(stack, ada);
    expect(byId.attributes.inventory.total_chests).toBe(own.meta.total_chests);
    expect(byId.attributes.inventory.chests.map((c: { id: string }) => c.id)).toEqual(own.data.map((c: { id: string }) => c.id));
    const balances = await wallet(stack, ada);
    for (const b of byId.attributes.balances) expect(b.amount, b.code).toBe(balances[b.code]!.balance);
    // The ledger behind them: each currency's newest row ends at its balance; registration's credits are there.
    const ledger = byId.attributes.ledger as { total: number; latest: { currency: string; delta: string; balance_after: string; reason: string }[] };
    expect(ledger.total).toBe(ledger.latest.length);
    for (const b of byId.attributes.balances.filter((x: { amount: string }) => x.amount !== '0.00'))
      expect(ledger.latest.find((e) => e.currency === b.code)!.balance_after, b.code).toBe(b.amount);
    expect(ledger.latest.map((e) => e.reason)).toEqual(expect.arrayContaining(['initial_currency', 'welcome_bonus']));
    expect(byId.attributes.openings.total).toBe(1);
    expect(byId.attributes.openings.latest[0].items.length).toBeGreaterThan(0);
    expect(byId.attributes.collections.reduce((n: number, c: { unique_items: number }) => n + c.unique_items, 0)).toBeGreaterThan(0);
  });

  it("shows a chest's real drops against its disclosed odds, counted from the app's own openings", async () => {
    // Ada opened one chest: her starter chest.
    const [opening] = (await admin(game.secretKey, `/api/v1/admin/players/${ada.id}`)).json().data.attributes.openings.latest;
    const d = (await ok(`/api/v1/admin/chests/${opening.chest_type_id}/drops`)).data.attributes;
    expect([d.openings, d.items]).toEqual([1, opening.items.length]);
    for (const r of d.rarities as { rarity: string; count: number }[])
      expect(r.count, r.rarity).toBe(opening.items.filter((i: { rarity: string }) => i.rarity === r.rarity).length);
    expect(d.rarities.reduce((n: number, r: { observed: number }) => n + r.observed, 0)).toBeCloseTo(1, 9);
    expect(d.rarities.reduce((n: number, r: { disclosed: number }) => n + r.disclosed, 0)).toBeCloseTo(1, 9);
    expect(d.chi_square_p_value).toBeGreaterThanOrEqual(0);
    // The same chest by slug; another app has no openings of its own: nothing observed, no p-value.
    expect((await ok(`/api/v1/admin/chests/${d.chest.slug}/drops`)).data.attributes.openings).toBe(1);
    const none = (await ok(`/api/v1/admin/chests/${d.chest.slug}/drops`, other.secretKey)).data.attributes;
    expect([none.openings, none.items, none.chi_square_p_value]).toEqual([0, 0, null]);
  });

  it("never reaches another app's player, whichever way it is named", async () => {
    for (const id of [ada.id, encodeURIComponent(email)])
      expectError(await admin(other.secretKey, `/api/v1/admin/players/${id}`), 404, 'player_not_found');
    expect((await ok('/api/v1/admin/overview', other.secretKey)).data.attributes.players.total).toBe(0);
  });

  it('records every action in the audit log (who, what, on what, when, how it ended), and no read', async () => {
    const started = Date.now();
    const patch = (apiKey: string) =>
      stack.inject({
        method: 'PATCH',
        url: `/api/v1/admin/players/${ada.id}`,
        headers: { apikey: apiKey, accept: 'application/vnd.api+json', 'content-type': 'application/vnd.api+json' },
        payload: { data: { type: 'player', attributes: { country: 'DE' } }, meta: { note: 'Ticket 42: moved' } },
      });
    expect((await patch(game.secretKey)).statusCode).toBe(200);
    await ok(`/api/v1/admin/players/${ada.id}`);
    expectError(await patch(game.publishableKey), 403, 'secret_key_required');
    await eventually(async () => {
      const log = await ok('/api/v1/admin/audit?page[limit]=50');
      const entries = log.data.map((e: { attributes: { action: string; status: number } }) => e.attributes);
      expect(entries.map((e: { action: string; status: number }) => [e.action, e.status])).toEqual([
        ['PATCH /api/v1/admin/players/{id}', 403],
        ['PATCH /api/v1/admin/players/{id}', 200],
      ]);
      expect(entries[1]).toMatchObject({ actor: `secret key …${game.secretKey.slice(-4)}`, target: ada.id, note: 'Ticket 42: moved' });
      expect(entries[0]).toMatchObject({ actor: `publishable key …${game.publishableKey.slice(-4)}`, target: ada.id });
      expect(Date.parse(entries[1].at)).toBeGreaterThanOrEqual(started - 1000);
    });
    // Another app's log holds none of it.
    const theirs = await ok('/api/v1/admin/audit', other.secretKey);
    expect(theirs.data).toEqual([]);
  });

  it('lists content versions, loads a validated file, and shows what changed', async () => {
    const before = await ok('/api/v1/admin/content');
    expect(before.meta.current_version).toBe(1);
    expect(before.data.map((v: { id: string; attributes: { current: boolean } }) => [v.id, v.attributes.current])).toEqual([['1', true]]);
    const content = readContentFile();
    const bad = await stack.inject({
      method: 'POST',
      url: '/api/v1/admin/content',
      headers: { apikey: game.secretKey, 'content-type': 'application/json', accept: 'application/vnd.api+json' },
      payload: { ...content, chests: content.chests.map((c, i) => (i === 0 ? { ...c, price: { rubies: 5 } } : c)) },
    });
    const problems = expectError(bad, 422);
    expect(problems.map((p) => p.source)).toEqual([{ pointer: '/chests/0/price/rubies' }]);
    expect((await ok('/api/v1/admin/content')).meta.current_version).toBe(1);

    const changed = structuredClone(content);
    // The app was created without content: the default content with player credit off (docs/design.md §6).
    changed.players.player_credit_allowed = false;
    changed.chests = changed.chests.filter((c) => c.id !== 'mecha-crate');
    changed.chests.find((c) => c.id === 'wooden-chest')!.price = { coins: 450 };
    const loaded = await stack.inject({
      method: 'POST',
      url: '/api/v1/admin/content',
      headers: { apikey: game.secretKey, 'content-type': 'application/json', accept: 'application/vnd.api+json' },
      payload: changed,
    });
    expect(loaded.statusCode, loaded.body).toBe(201);
    expect(loaded.json().data.attributes.version).toBe(2);
    const diff = (await ok('/api/v1/admin/content/1/diff')).data.attributes;
    expect(diff).toEqual({
      from_version: 1,
      to_version: 2,
      sections: [
        { section: 'chests', added: [], removed: ['mecha-crate'], changed: ['wooden-chest'], changed_fields: { 'wooden-chest': ['price.coins'] } },
      ],
    });
    expect((await ok('/api/v1/admin/content/2/diff')).data.attributes.sections).toEqual([]);
    // The services apply it: the overview shows their versions, the catalog the new price.
    await eventually(async () =>
      expect((await ok('/api/v1/admin/overview')).data.attributes.content_versions).toEqual({ chests: 2, collections: 2, wallet: 2 }),
    );
    await eventually(async () => {
      const catalog = (await stack.inject({ method: 'GET', url: '/api/v1/chests', headers: { apikey: game.publishableKey } })).json();
      expect(catalog.data.find((c: { attributes: { name: string } }) => c.attributes.name === 'Wooden Chest').meta.price).toEqual({ coins: 450 });
    });
  });

  it('refuses content that would be a complete gacha (422 complete_gacha naming the collection and collectibles), and loads it once a free chest drops them', async () => {
    const versionBefore = (await ok('/api/v1/admin/content')).meta.current_version;
    // The forest's set (it has a completion reward) drops only from a gems-only chest: a prize for
    // completing a set of paid random items once the rule is on.
    const content = structuredClone(readContentFile());
    content.players.player_credit_allowed = false;
    content.compliance = { ...content.compliance!, forbid_complete_gacha: true };
    const forest = content.collections.find((c) => c.id === 'enchanted-forest')!;
    const withoutForest = (pools: { collection?: string }[]) => pools.filter((p) => p.collection !== forest.id);
    for (const ch of content.chests)
      if (ch.id !== 'golden-chest') ch.rules.pools = withoutForest(ch.rules.pools as { collection?: string }[]) as typeof ch.rules.pools;
    const post = (payload: unknown) =>
      stack.inject({
        method: 'POST',
        url: '/api/v1/admin/content',
        headers: { apikey: game.secretKey, 'content-type': 'application/json', accept: 'application/vnd.api+json' },
        payload: payload as object,
      });
    const refused = expectError(await post(content), 422, 'complete_gacha');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.source).toEqual({ pointer: `/collections/${content.collections.indexOf(forest)}/completion_reward` });
    // The demo content applies the JP rule pack too: the refusal names its rule.
    expect((refused[0] as { meta?: unknown }).meta).toEqual({
      collection: forest.id,
      collectibles: forest.collectibles.map((c) => c.id),
      rule: { pack: 'JP', rule: 'no_complete_gacha', source: expect.stringContaining('Consumer Affairs Agency') },
    });
    expect((await ok('/api/v1/admin/content')).meta.current_version).toBe(versionBefore);
    // Without the rule the same content loads (a studio outside such rules decides); with it, a
    // free chest dropping the forest makes it fine.
    content.chests
      .find((c) => c.id === 'wooden-chest')!
      .rules.pools.push({ collection: forest.id } as (typeof content.chests)[0]['rules']['pools'][0]);
    const loaded = await post(content);
    expect(loaded.statusCode, loaded.body).toBe(201);
  });

  it("simulates a chest's odds on its current rules, reproducibly with a seed", async () => {
    const simulate = (chest: string, attributes: Record<string, unknown>) =>
      stack.inject({
        method: 'POST',
        url: `/api/v1/admin/chests/${chest}/simulation`,
        headers: { apikey: game.secretKey, 'content-type': 'application/vnd.api+json', accept: 'application/vnd.api+json' },
        payload: { data: { type: 'simulation', attributes } },
      });
    const first = await simulate('silver-chest', { opens: 2000, seed: 'c0ffee' });
    expect(first.statusCode, first.body).toBe(200);
    const run = first.json().data.attributes;
    expect([run.opens, run.chest.slug, run.seed]).toEqual([2000, 'silver-chest', 'c0ffee']);
    const silver = readContentFile().chests.find((c) => c.id === 'silver-chest')!;
    expect(run.pity).toMatchObject({ rarity: silver.rules.pity!.rarity, hard: silver.rules.pity!.hard });
    expect(run.rarities.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(run.items);
    // The shares disclosed are the ones the public odds publish.
    const odds = (
      await stack.inject({ method: 'GET', url: `/api/v1/chests/${first.json().data.id}/odds`, headers: { apikey: game.publishableKey } })
    ).json();
    for (const r of run.rarities) {
      const disclosed = odds.data.attributes.pity.effective_rarities.find((x: { rarity: string }) => x.rarity === r.rarity).probability;
      expect(r.disclosed).toBeCloseTo(disclosed, 10);
    }
    // The same seed, the same run.
    expect((await simulate(first.json().data.id, { opens: 2000, seed: 'c0ffee' })).json().data.attributes.rarities).toEqual(run.rarities);
    expectError(await simulate('no-such-chest', {}), 404, 'chest_not_found');
    expectError(await simulate('silver-chest', { opens: 100_001 }), 422);
  });
});

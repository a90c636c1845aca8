import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDropTable, expectedPullsToFeatured, readContentFile, type AppContent, type ChestRules, chestTypeId } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { createApp, get, registerPlayer, sql, type Player } from '../../../services/chests/test/support/chests.js';
// @ts-expect-error: the offline verifier is plain JavaScript (its banner part reads the odds document).
import { bannerParameters } from '../../../scripts/verify/banner.mjs';

const DAY = 86_400_000;
const at = (offset: number) => new Date(Date.now() + offset).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A banner resource as the API shows it. */
interface BannerResource {
  type: string;
  id: string;
  attributes: Record<string, unknown> & { active: boolean; starts_at: string; ends_at: string };
  relationships: { chest_type: { data: { type: string; id: string } } };
  meta: { player?: Record<string, unknown> };
}

/**
 * The demo content with three banners of its own on the Abyssal Chest, relative to now: one
 * running (a 50/50 with the guarantee, a spark converting to coins and a legendary ten-pull floor),
 * one to come (two featured legendaries at 0.75, no guarantee, no spark, no floor, a pity group of
 * its own name) and one ended ten days ago.
 */
function contentWithBanners(): AppContent {
  const c = structuredClone(readContentFile());
  c.banners = [
    {
      slug: 'tide-call',
      name: 'Tide Call',
      chest: 'abyssal-chest',
      starts_at: at(-DAY),
      ends_at: at(30 * DAY),
      featured: { rarity: 'legendary', collectibles: ['sea-kraken'], share: 0.5 },
      guarantee: true,
      spark: { cost: 10, currency: 'coins' },
      ten_pull_floor: 'legendary',
    },
    {
      slug: 'deep-echo',
      name: 'Deep Echo',
      chest: 'abyssal-chest',
      starts_at: at(40 * DAY),
      ends_at: at(60 * DAY),
      featured: { rarity: 'legendary', collectibles: ['sea-leviathan', 'sea-kraken'], share: 0.75 },
      guarantee: false,
      pity_group: 'abyss',
    },
    {
      slug: 'old-tide',
      name: 'Old Tide',
      chest: 'abyssal-chest',
      starts_at: at(-40 * DAY),
      ends_at: at(-10 * DAY),
      featured: { rarity: 'legendary', collectibles: ['sea-kraken'], share: 0.5 },
      guarantee: true,
    },
  ];
  return c;
}

// The read side of gacha banners (docs/design.md §8) through the running stack: the list of
// active and coming banners, one banner, its odds document (docs/fairness.md, "Banner pulls"), and
// the caller's standing with a token. The maths is packages/shared/test/banner*.test.ts; here the
// figures served are checked against the domain's own functions on the disclosed rules.

/** The drop table an odds document discloses, built afresh from its rules and inputs (as a verifier would). */
const tableOf = (a: {
  rules: unknown;
  rule_inputs: { rarities: Parameters<typeof buildDropTable>[1]; collectibles: { id: string; collection_id: string; rarity: string }[] };
}) =>
  buildDropTable(
    a.rules as ChestRules,
    a.rule_inputs.rarities,
    a.rule_inputs.collectibles.map((c) => ({ id: c.id, collectionId: c.collection_id, rarity: c.rarity })),
  );

describe('banners, the read side (GET /api/v1/banners, /banners/{id}, /banners/{id}/odds)', () => {
  let stack: TestStack;
  let apiKey: string;
  let appId: string;
  let player: Player;
  const content = contentWithBanners();
  const abyssal = () => chestTypeId(appId, 'abyssal-chest');

  const read = async (url: string, token?: string, key = apiKey) => {
    const res = await get(stack, url, token, key);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return { body, headers: res.headers };
  };

  beforeAll(async () => {
    stack = await startStack();
    const app = await createApp(stack, content);
    apiKey = app.publishableKey;
    appId = app.appId;
    player = await registerPlayer(stack, apiKey);
    // The content reaches chests moments after the app is created.
    await eventually(async () => expect((await read('/api/v1/banners')).body.data.length).toBeGreaterThan(0), 20_000);
  });
  afterAll(async () => stack?.close());

  it('lists the active and coming banners in content order, not the ended one', async () => {
    const { body, headers } = await read('/api/v1/banners');
    const data = body.data as BannerResource[];
    expect(data.map((b) => [b.id, b.attributes.active])).toEqual([
      ['tide-call', true],
      ['deep-echo', false],
    ]);
    expect(body.meta).toEqual({ total_count: 2 });
    // No token: nothing of a player, and nothing private.
    expect(data.map((b) => b.meta)).toEqual([{}, {}]);
    expect(headers['cache-control']).toBeUndefined();
    const [tide, deep] = data;
    expect(tide).toEqual({
      type: 'banner',
      id: 'tide-call',
      attributes: {
        name: 'Tide Call',
        starts_at: content.banners![0]!.starts_at,
        ends_at: content.banners![0]!.ends_at,
        active: true,
        featured: { rarity: 'legendary', collectibles: ['sea-kraken'], share: 0.5, names: ['Kraken'] },
        guarantee: true,
        spark: { cost: 10, currency: 'coins' },
        pity_group: 'tide-call',
        ten_pull_floor: 'legendary',
        // Its chest type's catalog price: what one pull costs in each currency.
        price_per_pull: { coins: 1000, gems: 25 },
      },
      relationships: { chest_type: { data: { type: 'chest', id: abyssal() } } },
      links: { self: expect.stringMatching(/^http:\/\/[^/]+\/api\/v1\/banners\/tide-call$/) },
      meta: {},
    });
    expect(deep!.attributes).toMatchObject({
      active: false,
      // The names in the order of the ids.
      featured: { rarity: 'legendary', collectibles: ['sea-leviathan', 'sea-kraken'], share: 0.75, names: ['Leviathan', 'Kraken'] },
      guarantee: false,
      spark: null,
      pity_group: 'abyss',
      ten_pull_floor: null,
    });
    // The relationship names a real catalog chest: the Abyssal Chest.
    const chest = await read(`/api/v1/chests/${tide!.relationships.chest_type.data.id}`);
    expect(chest.body.data.attributes.name).toBe('Abyssal Chest');
  });

  it('shows one banner (an ended one too), and 404 banner_not_found for an unknown id or one that is no slug', async () => {
    const one = await read('/api/v1/banners/deep-echo');
    expect(one.body.data.id).toBe('deep-echo');
    expect(one.body.data.attributes.starts_at).toBe(content.banners![1]!.starts_at);
    const ended = await read('/api/v1/banners/old-tide');
    expect(ended.body.data.attributes).toMatchObject({ active: false, ends_at: content.banners![2]!.ends_at, spark: null });

    for (const id of ['no-such-banner', 'Tide-Call', 'tide_call', '%E2%98%83', 'a'.repeat(65), '-tide', '..%2Fchests', 'tide-call%00']) {
      for (const suffix of ['', '/odds']) {
        const errors = expectError(await get(stack, `/api/v1/banners/${id}${suffix}`, undefined, apiKey), 404, 'banner_not_found');
        expect(errors[0]!.source).toEqual({ parameter: 'id' });
      }
    }
    // The demo app's banner is not this app's.
    expectError(await get(stack, '/api/v1/banners/kraken-rising', undefined, apiKey), 404, 'banner_not_found');
    // Query members are refused as on every route that takes none.
    expectError(await get(stack, '/api/v1/banners/tide-call?include=chest_type', undefined, apiKey), 400);
  });

  it('serves the banner odds document: the banner, the chest rules it rolls, the long-run share and the exact expected pulls', async () => {
    const { body } = await read('/api/v1/banners/tide-call/odds');
    expect(body.data.type).toBe('banner_odds');
    expect(body.data.id).toBe('tide-call');
    expect(body.meta).toEqual({});
    const a = body.data.attributes;
    expect(a).toMatchObject({
      chest_type_id: abyssal(),
      pity_group: 'tide-call',
      featured: { rarity: 'legendary', collectibles: ['sea-kraken'], share: 0.5 },
      guarantee: true,
      spark: { cost: 10, currency: 'coins' },
      ten_pull_floor: 'legendary',
      starts_at: content.banners![0]!.starts_at,
      ends_at: content.banners![0]!.ends_at,
    });
    // The guarantee: 1 / (2 − 0.5).
    expect(a.long_run_featured_share).toBeCloseTo(2 / 3, 12);
    // rules and rule_inputs are the chest's at that rules version, as its own odds document gives them.
    const chestOdds = (await read(`/api/v1/chests/${abyssal()}/odds?rules_version=${a.rules_version}`)).body.data.attributes;
    expect(a.rules).toEqual(chestOdds.rules);
    expect(a.rule_inputs).toEqual(chestOdds.rule_inputs);
    // The offline verifier reads its banner from this document alone.
    expect(bannerParameters(body)).toEqual({
      featured: a.featured,
      guarantee: true,
      ten_pull_floor: 'legendary',
      rules: a.rules,
      rule_inputs: a.rule_inputs,
    });
    // The expected pulls are the domain's exact figures for the disclosed rules (built afresh from them).
    const table = tableOf(a);
    const banner = { featured: a.featured, guarantee: true, ten_pull_floor: 'legendary' };
    const withGuarantee = expectedPullsToFeatured(table, banner);
    const withoutGuarantee = expectedPullsToFeatured(table, { ...banner, guarantee: false });
    expect(a.expected_pulls_to_featured.with_guarantee).toBeCloseTo(withGuarantee, 9);
    expect(a.expected_pulls_to_featured.without_guarantee).toBeCloseTo(withoutGuarantee, 9);
    // The guarantee saves pulls; both are finite, more than one pull.
    expect(withGuarantee).toBeGreaterThan(1);
    expect(withoutGuarantee).toBeGreaterThan(withGuarantee);

    // Without the guarantee the long-run share is the share itself; two featured collectibles.
    const deep = (await read('/api/v1/banners/deep-echo/odds')).body.data.attributes;
    expect(deep).toMatchObject({ guarantee: false, long_run_featured_share: 0.75, spark: null, ten_pull_floor: null, pity_group: 'abyss' });
    expect(deep.featured.collectibles).toEqual(['sea-leviathan', 'sea-kraken']);
    for (const id of deep.featured.collectibles) expect(deep.rule_inputs.collectibles.map((c: { id: string }) => c.id)).toContain(id);
  });

  it("the demo banner's figures are docs/content.md's: the Kraken in 4.8 pulls with the guarantee, 6.3 without", async () => {
    const a = (await read('/api/v1/banners/kraken-rising/odds', undefined, stack.apiKey)).body.data.attributes;
    expect(a.expected_pulls_to_featured.with_guarantee).toBeCloseTo(4.793, 3);
    expect(a.expected_pulls_to_featured.without_guarantee).toBeCloseTo(6.282, 3);
  });

  it("with a token: the caller's standing in meta.player (zeros for a new player), private", async () => {
    const zero = { pulls: 0, spark_points: 0, guaranteed_featured: false, pity: 0 };
    const list = await read('/api/v1/banners', player.token);
    expect(list.headers['cache-control']).toBe('private, no-store');
    expect((list.body.data as BannerResource[]).map((b) => [b.id, b.meta.player])).toEqual([
      ['tide-call', zero],
      ['deep-echo', zero],
    ]);
    const one = await read('/api/v1/banners/tide-call', player.token);
    expect(one.headers['cache-control']).toBe('private, no-store');
    expect(one.body.data.meta).toEqual({ player: zero });
    const odds = await read('/api/v1/banners/tide-call/odds', player.token);
    expect(odds.headers['cache-control']).toBe('private, no-store');
    // From a fresh standing, the expected pulls are the public with-guarantee figure.
    expect(odds.body.meta.player).toEqual({
      ...zero,
      expected_pulls_to_featured: odds.body.data.attributes.expected_pulls_to_featured.with_guarantee,
    });
  });

  it("reads the caller's standing as pulls left it: the group's flag, counter, pulls and spark points", async () => {
    const p = await registerPlayer(stack, apiKey);
    // As if earlier pulls had lost a 50/50 at counter 3 after 7 pulls (the write side's tables, 0017).
    await sql(
      stack,
      `INSERT INTO chests.banner_standings (app_id, player_id, pity_group, guaranteed_featured, opens_since, pulls, spark_points)
       VALUES ($1, $2, 'tide-call', true, 3, 7, 7)`,
      [appId, p.id],
    );
    const standing = { pulls: 7, spark_points: 7, guaranteed_featured: true, pity: 3 };
    const list = (await read('/api/v1/banners', p.token)).body.data as BannerResource[];
    // deep-echo is of another group: untouched.
    expect(list.map((b) => b.meta.player)).toEqual([standing, { pulls: 0, spark_points: 0, guaranteed_featured: false, pity: 0 }]);
    expect((await read('/api/v1/banners/tide-call', p.token)).body.data.meta.player).toEqual(standing);
    const odds = (await read('/api/v1/banners/tide-call/odds', p.token)).body;
    const a = odds.data.attributes;
    const table = tableOf(a);
    const expected = expectedPullsToFeatured(table, { featured: a.featured, guarantee: true }, { pity: 3, guaranteedFeatured: true });
    expect(odds.meta.player).toMatchObject(standing);
    expect(odds.meta.player.expected_pulls_to_featured).toBeCloseTo(expected, 9);
    // With the flag set (the next legendary is the Kraken) and the counter advanced, fewer pulls than from a fresh standing.
    expect(odds.meta.player.expected_pulls_to_featured).toBeLessThan(a.expected_pulls_to_featured.with_guarantee);
  });
});

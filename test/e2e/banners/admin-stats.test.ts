import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { createApp, registerPlayer, sql, studioGrant, type Player } from '../../../services/chests/test/support/chests.js';

// GET /api/v1/admin/banners/{id}/stats (docs/design.md §8) through the running stack: real
// pulls of the demo banner kraken-rising (the Abyssal Chest, 1,000 coins a pull; a 50/50 on
// sea-kraken with the guarantee; legendary pity at 15; a legendary ten-pull floor; a spark at 10
// points converting to coins) counted against the pulls' own answers, side by side with the
// disclosed figures (the banner odds document's) and a seeded simulation.
describe('a banner stats for the studio (GET /api/v1/admin/banners/{id}/stats)', () => {
  let stack: TestStack;
  let game: { appId: string; publishableKey: string; secretKey: string };
  beforeAll(async () => {
    stack = await startStack();
    game = await createApp(stack);
    await appWithBanner(game.publishableKey);
  });
  afterAll(async () => stack?.close());

  type Opening = {
    collectibles: { id: string; attributes: { rarity: string } }[];
    meta: { banner: { featured: boolean; guaranteed_before: boolean; floor_rerolled: boolean } };
  };
  const stats = (id: string, apiKey = game.secretKey) =>
    stack.inject({ method: 'GET', url: `/api/v1/admin/banners/${id}/stats`, headers: { apikey: apiKey, accept: 'application/vnd.api+json' } });
  const pull = async (p: Player, count: number): Promise<Opening[]> => {
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/pull',
      headers: jsonApiHeaders(p.apiKey, p.token),
      payload: { data: { type: 'pull', attributes: { count, currency: 'coins' } } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  /** Waits until chests applied the new app's content (its banners arrive with it). */
  const appWithBanner = (apiKey: string) =>
    eventually(async () => {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/banners/kraken-rising', headers: { apikey: apiKey } });
      expect(res.statusCode).toBe(200);
    }, 20_000);
  const richPlayer = async () => {
    const p = await registerPlayer(stack, game.publishableKey);
    await studioGrant(stack, p, 'coins', '1000000');
    return p;
  };

  it('answers before any pull: zeros, the disclosed figures of the odds document, and the simulation', async () => {
    // The first call runs the simulation in a worker thread (later ones reuse it). Its speed is the bench's to judge, not a timed test's.
    const res = await stats('kraken-rising');
    expect(res.statusCode, res.body).toBe(200);
    expectJsonApi(res.json());
    expect(res.headers['cache-control']).toBe('no-store');
    const a = res.json().data.attributes;
    expect(a.real).toMatchObject({
      pulls: 0,
      players: 0,
      items: 0,
      featured_rarity_items: 0,
      featured_items: 0,
      guarantees_used: 0,
      spark_exchanges: 0,
    });
    expect(a.real.featured_share).toEqual({ share: 0, low: null, high: null });
    const odds = (await stack.inject({ method: 'GET', url: '/api/v1/banners/kraken-rising/odds', headers: { apikey: game.publishableKey } })).json()
      .data.attributes;
    expect(a.disclosed).toEqual({
      share: 0.5,
      long_run_share: odds.long_run_featured_share,
      expected_pulls_to_featured: odds.expected_pulls_to_featured,
    });
    expect(a.disclosed.long_run_share).toBeCloseTo(2 / 3, 12);
    expect(a.chest).toMatchObject({ id: odds.chest_type_id, slug: 'abyssal-chest', rules_version: odds.rules_version });
    expect(a.banner).toMatchObject({
      featured: { rarity: 'legendary', collectibles: ['sea-kraken'], share: 0.5 },
      guarantee: true,
      ten_pull_floor: 'legendary',
    });
  });

  it('runs a seeded simulation of the same quantities, the same on every call and in every app', async () => {
    const first = (await stats('kraken-rising')).json().data.attributes.simulation;
    expect((await stats('kraken-rising')).json().data.attributes.simulation).toEqual(first);
    // Another app with the same content runs it afresh (nothing shared but the seed): the same figures.
    const other = await createApp(stack);
    await appWithBanner(other.publishableKey);
    expect((await stats('kraken-rising', other.secretKey)).json().data.attributes.simulation).toEqual(first);
    expect(first).toMatchObject({ players: 5, pulls_per_player: 1000, pulls: 5000 });
    expect(first.featured_items).toBe(first.collectibles.find((c: { id: string }) => c.id === 'sea-kraken').count);
    expect(first.featured_items).toBeLessThanOrEqual(first.featured_rarity_items);
    // Five players of 1,000 pulls: near the long run of 2/3, above the plain 50/50 (over a thousand legendaries at pity 15).
    expect(first.featured_rarity_items).toBeGreaterThan(1000);
    expect(first.featured_share.low).toBeLessThan(2 / 3);
    expect(first.featured_share.high).toBeGreaterThan(2 / 3);
    expect(first.featured_share.low).toBeGreaterThan(0.5);
    // The chase from a fresh standing, against the exact 4.793 pulls (200 players: within a pull).
    expect(Math.abs(first.first_featured.mean - 4.793)).toBeLessThan(1);
    expect(first.spark).toMatchObject({ cost: 10, collectible: 'sea-kraken', players: 200 });
    expect(first.spark.with_spark).toBeLessThanOrEqual(first.spark.without_spark);
  });

  it('counts the real pulls as their answers recorded them: players, featured items, guarantees used, floor re-rolls, spark exchanges, points', async () => {
    const [a, b] = [await richPlayer(), await richPlayer()];
    const openings = [...(await pull(a, 10)), ...(await pull(a, 1)), ...(await pull(b, 10))];
    // A guarantee used for certain: b's flag set and the counter at hard pity, as earlier pulls would leave them.
    await sql(stack, 'UPDATE chests.banner_standings SET guaranteed_featured = true, opens_since = 14 WHERE player_id = $1', [b.id]);
    const forced = await pull(b, 1);
    expect(forced[0]!.meta.banner).toMatchObject({ guaranteed_before: true, featured: true });
    openings.push(...forced);
    const spark = await stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/spark',
      headers: jsonApiHeaders(a.apiKey, a.token),
      payload: { data: { type: 'spark', attributes: { collectible_id: 'sea-kraken' } } },
    });
    expect(spark.statusCode, spark.body).toBe(201);

    const items = openings.flatMap((o) => o.collectibles);
    const legendaries = items.filter((c) => c.attributes.rarity === 'legendary');
    const featured = legendaries.filter((c) => c.id === 'sea-kraken');
    const res = await stats('kraken-rising');
    expect(res.statusCode, res.body).toBe(200);
    const real = res.json().data.attributes.real;
    expect(real).toMatchObject({
      pulls: 22,
      players: 2,
      items: items.length,
      featured_rarity_items: legendaries.length,
      featured_items: featured.length,
      collectibles: [{ id: 'sea-kraken', count: featured.length }],
      guarantees_used: openings.filter((o) => o.meta.banner.guaranteed_before && o.meta.banner.featured).length,
      floor_rerolls: openings.filter((o) => o.meta.banner.floor_rerolled).length,
      spark_exchanges: 1,
      // a: 11 points less the spark's 10; b: 11.
      points_held: 12,
      points_settled: 0,
    });
    expect(real.guarantees_used).toBeGreaterThanOrEqual(1);
    expect(real.featured_share.share).toBeCloseTo(featured.length / legendaries.length, 12);
    expect(real.featured_share.low).toBeLessThanOrEqual(real.featured_share.share);
    expect(real.featured_share.high).toBeGreaterThanOrEqual(real.featured_share.share);
    expect(Date.parse(real.since)).toBeLessThanOrEqual(Date.now());
    // Points settled at the banner's end (the worker's conversion, written as it writes it) are counted.
    await sql(
      stack,
      'UPDATE chests.banner_standings SET settled_at = now(), settled_points = spark_points, spark_points = 0 WHERE app_id = $1 AND player_id = $2 AND pity_group = $3',
      [game.appId, b.id, 'kraken-rising'],
    );
    expect((await stats('kraken-rising')).json().data.attributes.real).toMatchObject({ points_settled: 11, players_settled: 1, points_held: 1 });
    // Another app's pulls are not this app's.
    const other = await createApp(stack);
    await appWithBanner(other.publishableKey);
    expect((await stats('kraken-rising', other.secretKey)).json().data.attributes.real).toMatchObject({ pulls: 0, players: 0 });
  });

  it('404 banner_not_found for an unknown or malformed id; the publishable key is refused', async () => {
    expectError(await stats('no-such-banner'), 404, 'banner_not_found');
    expectError(await stats('Not_A_Slug'), 404, 'banner_not_found');
    expectError(await stats('x'.repeat(65)), 404, 'banner_not_found');
    expectError(await stats('%00'), 404, 'banner_not_found');
    expectError(await stats('kraken-rising', game.publishableKey), 403, 'secret_key_required');
  });
});

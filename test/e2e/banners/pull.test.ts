import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminLoadContent, OpeningGranted, prefixed, readContentFile, SparkGranted, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { appOfToken } from '../../support/grant-currency.js';
import { createApp, registerPlayer, sql, studioGrant, wallet, type Player } from '../../../services/chests/test/support/chests.js';

// Banner pulls and the spark through the running stack (docs/design.md §8): the demo banner
// kraken-rising pulls the Abyssal Chest (1,000 coins; legendary pity at 15; 50/50 on sea-kraken with
// the guarantee; a legendary floor for ten-pulls; a spark at 10 points). The maths itself (pinned
// seeds, 100,000 simulated pulls, the offline verifier) is packages/shared/test/banner*.test.ts.
const run = promisify(execFile);

describe('banner pulls and the spark (POST /api/v1/banners/{id}/pull, /spark)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // Spark points left at a banner's end settle within a second here (default: a minute).
    stack = await startStack({ env: { SPARK_SETTLE_INTERVAL_MS: '1000' } });
  });
  afterAll(async () => stack?.close());

  const pull = (p: Player, banner: string, count: number, currency = 'coins', key?: string) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/banners/${banner}/pull`,
      headers: { ...jsonApiHeaders(p.apiKey, p.token), ...(key ? { 'idempotency-key': key } : {}) },
      payload: { data: { type: 'pull', attributes: { count, currency } } },
    });
  const spark = (p: Player, banner: string, collectible: string, key?: string) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/banners/${banner}/spark`,
      headers: { ...jsonApiHeaders(p.apiKey, p.token), ...(key ? { 'idempotency-key': key } : {}) },
      payload: { data: { type: 'spark', attributes: { collectible_id: collectible } } },
    });
  const standing = async (p: Player, group: string) =>
    (
      await sql<{ guaranteed_featured: boolean; opens_since: number; pulls: number }>(
        stack,
        'SELECT guaranteed_featured, opens_since, pulls FROM chests.banner_standings WHERE player_id = $1 AND pity_group = $2',
        [p.id, group],
      )
    )[0];
  /** Sets a player's standing in a group as if earlier pulls had left it so. */
  const setStanding = (p: Player, group: string, s: { guaranteed: boolean; pity: number }) =>
    sql(
      stack,
      `INSERT INTO chests.banner_standings (app_id, player_id, pity_group, guaranteed_featured, opens_since)
       VALUES ($5, $1, $2, $3, $4)
       ON CONFLICT (app_id, player_id, pity_group) DO UPDATE SET guaranteed_featured = $3, opens_since = $4`,
      [p.id, group, s.guaranteed, s.pity, appOfToken(p.token)],
    );
  const granted = async (ids: string[]) =>
    (await sql<{ n: number }>(stack, 'SELECT count(*)::int AS n FROM collections.owned_collectibles WHERE opening_id = ANY($1::uuid[])', [ids]))[0]!
      .n;

  type Result = {
    collectibles: { id: string; attributes: { rarity: string } }[];
    meta: {
      opening_id: string;
      fairness: { nonce: number };
      banner: { id: string; featured: boolean; guaranteed_before: boolean; spark_points_after: number; floor_rerolled: boolean };
    };
  };

  async function richPlayer(coins = '100000'): Promise<Player> {
    const p = await registerPlayer(stack);
    await studioGrant(stack, p, 'coins', coins);
    return p;
  }

  it('pulls ten: paid once, opened as one batch with the legendary floor, meta.banner on each, the standing and spark points after, the grants applied', async () => {
    const p = await richPlayer();
    const before = Number((await wallet(stack, p)).coins!.balance);
    const res = await pull(p, 'kraken-rising', 10);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { data: Result[]; meta: Record<string, unknown> & { player: Record<string, unknown> } };
    expect(body.data).toHaveLength(10);
    expect(body.data.some((d) => d.collectibles.some((c) => c.attributes.rarity === 'legendary'))).toBe(true);
    const nonces = body.data.map((d) => d.meta.fairness.nonce);
    expect(nonces).toEqual(nonces.map((_, i) => nonces[0]! + i));
    expect(body.data.map((d) => d.meta.banner.spark_points_after)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const d of body.data) {
      expect(d.meta.banner.id).toBe('kraken-rising');
      // An opening is featured exactly when it holds sea-kraken.
      expect(d.meta.banner.featured).toBe(d.collectibles.some((c) => c.id === 'sea-kraken'));
    }
    expect(body.meta).toMatchObject({ banner_id: 'kraken-rising', pulls: 10, price_paid: { coins: 10000 } });
    expect(body.meta.player).toMatchObject({ pulls: 10, spark_points: 10 });
    // The balance right after the debit (duplicates converted into coins are credited after it).
    expect(Number((body.meta.balance as Record<string, string>).coins)).toBe(before - 10000);
    const items = body.data.reduce((n, d) => n + d.collectibles.length, 0);
    expect(await granted(body.data.map((d) => d.meta.opening_id))).toBe(items);
    // The chest's observed odds count its own openings only: a banner pull is another draw (judged on the banner's stats).
    const chestTypeId =
      body.data[0]!.meta.opening_id &&
      (await sql<{ chest_type_id: string }>(stack, 'SELECT chest_type_id FROM chests.openings WHERE id = $1', [body.data[0]!.meta.opening_id]))[0]!
        .chest_type_id;
    const observed = await stack.inject({ method: 'GET', url: `/api/v1/chests/${chestTypeId}/odds/observed`, headers: jsonApiHeaders(p.apiKey) });
    expect(observed.statusCode, observed.body).toBe(200);
    expect(observed.json().data.attributes.openings).toBe(0);
    // The openings list shows the banner too.
    const list = await stack.inject({ method: 'GET', url: '/api/v1/players/me/openings', headers: jsonApiHeaders(p.apiKey, p.token) });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().data[0].attributes.banner).toMatchObject({ id: 'kraken-rising' });
  });

  it('after a lost 50/50 the next legendary is featured, and the flag clears', async () => {
    const p = await richPlayer('1000000');
    // Hard pity at 15: a counter of 14 makes the next opening's legendary certain; its 50/50 is the fair stream's.
    let lost: Result | undefined;
    for (let i = 0; i < 20 && !lost; i++) {
      await setStanding(p, 'kraken-rising', { guaranteed: false, pity: 14 });
      const res = await pull(p, 'kraken-rising', 1);
      expect(res.statusCode, res.body).toBe(200);
      const o = (res.json() as { data: Result[] }).data[0]!;
      expect(o.collectibles.some((c) => c.attributes.rarity === 'legendary')).toBe(true);
      if (!o.meta.banner.featured) lost = o;
    }
    expect(lost, 'no off-banner legendary in 20 forced pulls (chance 1 in a million)').toBeDefined();
    expect((await standing(p, 'kraken-rising'))!.guaranteed_featured).toBe(true);
    await sql(stack, 'UPDATE chests.banner_standings SET opens_since = 14 WHERE player_id = $1', [p.id]);
    const next = (await pull(p, 'kraken-rising', 1)).json() as { data: Result[] };
    expect(next.data[0]!.meta.banner).toMatchObject({ guaranteed_before: true, featured: true });
    expect(next.data[0]!.collectibles.some((c) => c.id === 'sea-kraken')).toBe(true);
    // The flag after it is the last legendary's verdict: cleared by a featured one, set again by an off-banner one after it.
    const legendaries = next.data[0]!.collectibles.filter((c) => c.attributes.rarity === 'legendary');
    expect(await standing(p, 'kraken-rising')).toMatchObject({ guaranteed_featured: legendaries.at(-1)!.id !== 'sea-kraken', opens_since: 0 });
  });

  it('exchanges spark points exactly once under racing requests, and grants the chosen collectible once, as a spark grant', async () => {
    const p = await richPlayer();
    expect((await pull(p, 'kraken-rising', 10)).statusCode).toBe(200);
    // Every grant published from here on (core NATS sees each JetStream publish).
    const grants: { subject: string; id: string | undefined; payload: Record<string, unknown> }[] = [];
    const sub = stack.nc.subscribe(prefixed(stack.env.NATS_PREFIX!, 'grants.>'), {
      callback: (_err, m) => grants.push({ subject: m.subject, id: m.headers?.get('Nats-Msg-Id'), payload: m.json() }),
    });
    await stack.nc.flush();
    const answers = await Promise.all(Array.from({ length: 6 }, () => spark(p, 'kraken-rising', 'sea-kraken')));
    const ok = answers.filter((r) => r.statusCode === 201);
    expect(ok, answers.map((r) => r.body).join('\n')).toHaveLength(1);
    for (const r of answers.filter((a) => a.statusCode !== 201)) expectError(r, 409, 'spark_points_insufficient');
    const exchange = ok[0]!.json();
    expect(exchange.data.attributes).toMatchObject({ banner_id: 'kraken-rising', collectible_id: 'sea-kraken', cost: 10 });
    expect(exchange.meta.spark_points_after).toBe(0);
    // Answered once collections applied the spark's grant (its own durable's notice).
    expect(exchange.meta.granted).toBe(true);
    const [points] = await sql<{ points: number }>(stack, 'SELECT spark_points AS points FROM chests.banner_standings WHERE player_id = $1', [p.id]);
    expect(points!.points).toBe(0);
    const owned = await sql<{ collectible_id: string }>(stack, 'SELECT collectible_id FROM collections.owned_collectibles WHERE opening_id = $1', [
      exchange.data.id,
    ]);
    expect(owned.map((o) => o.collectible_id)).toEqual(['sea-kraken']);
    // The grant travelled as the spark's own kind, its id the exchange's; no opening grant carried it.
    await stack.nc.flush();
    sub.unsubscribe();
    const sparks = grants.filter((g) => g.subject === prefixed(stack.env.NATS_PREFIX!, SparkGranted.subject));
    expect(sparks.length).toBeGreaterThanOrEqual(1);
    for (const g of sparks) {
      expect(g.id).toBe(exchange.data.id);
      expect(g.payload).toMatchObject({ exchangeId: exchange.data.id, playerId: p.id, bannerId: 'kraken-rising', collectibleId: 'sea-kraken' });
    }
    const openingGrants = grants.filter((g) => g.subject === prefixed(stack.env.NATS_PREFIX!, OpeningGranted.subject));
    expect(openingGrants.filter((g) => g.id === exchange.data.id || g.payload.source === 'spark')).toEqual([]);
  });

  /** The spark points a recorded opening says were left after it (the openings list, as stored). */
  const recordedPointsAfter = async (p: Player, openingId: string) => {
    const list = await stack.inject({ method: 'GET', url: '/api/v1/players/me/openings', headers: jsonApiHeaders(p.apiKey, p.token) });
    expect(list.statusCode, list.body).toBe(200);
    const found = (list.json().data as { id: string; attributes: { banner: { spark_points_after: number } } }[]).find((o) => o.id === openingId);
    expect(found, `opening ${openingId} in the list`).toBeDefined();
    return found!.attributes.banner.spark_points_after;
  };
  const storedPoints = async (p: Player) =>
    (await sql<{ points: number }>(stack, 'SELECT spark_points AS points FROM chests.banner_standings WHERE player_id = $1', [p.id]))[0]!.points;

  it("reports a pull's spark points as stored when an exchange commits between the pull's read of the standing and its write, and when they race", async () => {
    const p = await richPlayer('1000000');
    // Ten points, and the player's seed pair.
    expect((await pull(p, 'kraken-rising', 10)).statusCode).toBe(200);
    // Hold the seed pair: the next pull reads its standing, then waits at its openings' write (the nonce's compare-and-set).
    const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await holder.connect();
    let pulled: Awaited<ReturnType<typeof pull>>;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM chests.player_seeds WHERE player_id = $1 FOR UPDATE', [p.id]);
      const { pid } = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
      const pulling = pull(p, 'kraken-rising', 1);
      await eventually(async () => {
        const waiting = await sql<{ query: string }>(stack, 'SELECT query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
        expect(waiting.map((w) => w.query).join('\n')).toMatch(/WITH nonced AS/);
      }, 20_000);
      // Meanwhile an exchange takes the ten points.
      const sparked = await spark(p, 'kraken-rising', 'sea-kraken');
      expect(sparked.statusCode, sparked.body).toBe(201);
      expect(sparked.json().meta.spark_points_after).toBe(0);
      await holder.query('COMMIT');
      pulled = await pulling;
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    expect(pulled.statusCode, pulled.body).toBe(200);
    const opening = (pulled.json() as { data: Result[] }).data[0]!;
    // The pull's one point on top of the exchange's 0: answered, recorded and stored alike.
    expect(opening.meta.banner.spark_points_after).toBe(1);
    expect(pulled.json().meta.player.spark_points).toBe(1);
    expect(await storedPoints(p)).toBe(1);
    expect(await recordedPointsAfter(p, opening.meta.opening_id)).toBe(1);

    // Then free races of an exchange and a pull, in whichever order they land.
    for (let round = 0; round < 6; round++) {
      await sql(stack, 'UPDATE chests.banner_standings SET spark_points = 10 WHERE player_id = $1', [p.id]);
      const [pulled, sparked] = await Promise.all([pull(p, 'kraken-rising', 1), spark(p, 'kraken-rising', 'sea-kraken')]);
      expect(pulled.statusCode, pulled.body).toBe(200);
      expect(sparked.statusCode, sparked.body).toBe(201);
      const raced = (pulled.json() as { data: Result[] }).data[0]!;
      const after = raced.meta.banner.spark_points_after;
      // Either the exchange came first (10 - 10 = 0, then the pull's point: 1) or the pull did (11, then 11 - 10 = 1).
      expect([
        [1, 0],
        [11, 1],
      ]).toContainEqual([after, sparked.json().meta.spark_points_after]);
      expect(await storedPoints(p)).toBe(1);
      expect(await recordedPointsAfter(p, raced.meta.opening_id)).toBe(after);
    }
  });

  it('answers a keyed pull and a keyed spark again without paying or spending twice', async () => {
    const p = await richPlayer();
    const key = randomUUID();
    const first = await pull(p, 'kraken-rising', 10, 'coins', key);
    expect(first.statusCode, first.body).toBe(200);
    const again = await pull(p, 'kraken-rising', 10, 'coins', key);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().meta.purchase_id).toBe(first.json().meta.purchase_id);
    expect(again.json().data.map((d: Result) => d.meta.opening_id)).toEqual(first.json().data.map((d: Result) => d.meta.opening_id));
    expectError(await pull(p, 'kraken-rising', 1, 'coins', key), 409, 'idempotency_key_reused');
    const [paid] = await sql<{ n: number }>(stack, "SELECT count(*)::int AS n FROM chests.payments WHERE player_id = $1 AND status = 'completed'", [
      p.id,
    ]);
    expect(paid!.n).toBe(1);

    const sparkKey = randomUUID();
    const s1 = await spark(p, 'kraken-rising', 'sea-kraken', sparkKey);
    const s2 = await spark(p, 'kraken-rising', 'sea-kraken', sparkKey);
    expect([s1.statusCode, s2.statusCode]).toEqual([201, 201]);
    expect(s2.json().data.id).toBe(s1.json().data.id);
    expect(s2.headers['idempotent-replayed']).toBe('true');
  });

  it('refuses bad input with JSON:API errors and changes nothing', async () => {
    const p = await richPlayer();
    const before = (await wallet(stack, p)).coins!.balance;
    expectError(await pull(p, 'no-such-banner', 1), 404, 'banner_not_found');
    expectError(await pull(p, 'NOT_A_SLUG!', 1), 404, 'banner_not_found');
    expectError(await pull(p, 'kraken-rising', 3), 422);
    expectError(await pull(p, 'kraken-rising', 1, 'rubies'), 422);
    expectError(await spark(p, 'kraken-rising', 'sea-kraken'), 409, 'spark_points_insufficient');
    expectError(await spark(p, 'kraken-rising', 'no-such-collectible'), 422, 'not_featured');
    const noToken = await stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/pull',
      headers: jsonApiHeaders(p.apiKey),
      payload: { data: { type: 'pull', attributes: { count: 1, currency: 'coins' } } },
    });
    expect(noToken.statusCode).toBe(401);
    expect((await wallet(stack, p)).coins!.balance).toBe(before);
  });

  describe('banners of one pity group, and windows', () => {
    let apiKey: string;
    let appId: string;
    let content: AppContent;
    beforeAll(async () => {
      content = readContentFile();
      const now = Date.now();
      const at = (days: number) => new Date(now + days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const base = content.banners![0]!;
      // A chest like the Abyssal one where a legendary is rare and no pity helps: ten-pulls need their floor.
      const abyssal = content.chests.find((c) => c.id === 'abyssal-chest')!;
      content.chests.push({
        ...abyssal,
        id: 'deep-chest',
        name: 'Deep Chest',
        rules: { ...abyssal.rules, pity: undefined, rarity_weights: { common: 0.8, rare: 0.199, legendary: 0.001 } },
      });
      content.banners = [
        { ...base, slug: 'deep', chest: 'deep-chest' },
        { ...base, slug: 'tide-one', pity_group: 'tides', allow_overlap: true, starts_at: at(-1), ends_at: at(10) },
        { ...base, slug: 'tide-two', pity_group: 'tides', allow_overlap: true, starts_at: at(-1), ends_at: at(10) },
        { ...base, slug: 'later', starts_at: at(5), ends_at: at(9) },
        { ...base, slug: 'over', starts_at: at(-9), ends_at: at(-5) },
        { ...base, slug: 'ebb', pity_group: 'ebb', starts_at: at(-1), ends_at: at(10), spark: { cost: 10, currency: 'coins' } },
      ];
      const app = await createApp(stack, content);
      apiKey = app.publishableKey;
      appId = app.appId;
    });

    it('carries the guarantee and the pity counter to the next banner of the group', async () => {
      const p = await registerPlayer(stack, apiKey);
      await studioGrant(stack, p, 'coins', '1000000');
      let lost = false;
      let pulls = 0;
      for (let i = 0; i < 20 && !lost; i++) {
        await setStanding(p, 'tides', { guaranteed: false, pity: 14 });
        const o = ((await pull(p, 'tide-one', 1)).json() as { data: Result[] }).data[0]!;
        pulls++;
        lost = !o.meta.banner.featured;
      }
      expect(lost).toBe(true);
      await sql(stack, 'UPDATE chests.banner_standings SET opens_since = 14 WHERE player_id = $1', [p.id]);
      const res = await pull(p, 'tide-two', 1);
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as { data: Result[] }).data[0]!.meta.banner).toMatchObject({ id: 'tide-two', guaranteed_before: true, featured: true });
      // Pulls and spark points carry across the group's banners too: one point per pull on either.
      const legendaries = (res.json() as { data: Result[] }).data[0]!.collectibles.filter((c) => c.attributes.rarity === 'legendary');
      const player = res.json().meta.player;
      expect(player).toMatchObject({ guaranteed_featured: legendaries.at(-1)!.id !== 'sea-kraken' });
      expect(player.spark_points).toBe(player.pulls);
      expect(player.pulls).toBe(pulls + 1);
      // Points earned on tide-one (and a ten-pull of it) pay for a spark on tide-two.
      expect((await pull(p, 'tide-one', 10)).statusCode).toBe(200);
      const sparked = await spark(p, 'tide-two', 'sea-kraken');
      expect(sparked.statusCode, sparked.body).toBe(201);
      expect(sparked.json().meta.spark_points_after).toBe(pulls + 11 - 10);
    });

    it("the server's verification recomputes every opening of pulls, the 50/50, the guarantee and the floor's re-roll included", async () => {
      const p = await registerPlayer(stack, apiKey);
      await studioGrant(stack, p, 'coins', '1000000');
      const openings: Result[] = [];
      // Legendaries are 1 in 1,000 items here: almost every ten-pull has its tenth opening's last item re-rolled.
      for (let i = 0; i < 3 && !openings.some((o) => o.meta.banner.floor_rerolled); i++) {
        const res = await pull(p, 'deep', 10);
        expect(res.statusCode, res.body).toBe(200);
        const got = (res.json() as { data: Result[] }).data;
        expect(got.some((o) => o.collectibles.some((c) => c.attributes.rarity === 'legendary'))).toBe(true);
        openings.push(...got);
      }
      expect(openings.some((o) => o.meta.banner.floor_rerolled)).toBe(true);
      await setStanding(p, 'tides', { guaranteed: true, pity: 14 });
      openings.push(...((await pull(p, 'tide-one', 1)).json() as { data: Result[] }).data);
      expect(openings.at(-1)!.meta.banner).toMatchObject({ guaranteed_before: true, featured: true });
      const headers = jsonApiHeaders(apiKey, p.token);
      const rotated = await stack.inject({ method: 'POST', url: '/api/v1/players/me/fairness/rotate', headers });
      expect(rotated.statusCode).toBe(200);
      for (const o of openings) {
        const v = await stack.inject({ method: 'GET', url: `/api/v1/openings/${o.meta.opening_id}/verification`, headers });
        expect(v.statusCode, v.body).toBe(200);
        expect(v.json().data.attributes.matches, `opening ${o.meta.opening_id} ${JSON.stringify(o.meta.banner)}`).toBe(true);
      }
      // The offline verifier agrees, from the banner odds document alone: the floor's re-roll and the guarantee's opening.
      const dir = await mkdtemp(join(tmpdir(), 'ccs-banner-'));
      try {
        const serverSeed: string = rotated.json().meta.revealed.server_seed;
        const cases = [
          { banner: 'deep', opening: openings.find((o) => o.meta.banner.floor_rerolled)! },
          { banner: 'tide-one', opening: openings.at(-1)! },
        ];
        for (const [i, c] of cases.entries()) {
          const odds = await stack.inject({ method: 'GET', url: `/api/v1/banners/${c.banner}/odds`, headers: jsonApiHeaders(apiKey) });
          expect(odds.statusCode, odds.body).toBe(200);
          await writeFile(join(dir, `banner-${i}.json`), odds.body);
          await writeFile(join(dir, `opening-${i}.json`), JSON.stringify(c.opening));
          const out = await run(process.execPath, [
            'scripts/verify-opening.mjs',
            '--banner',
            join(dir, `banner-${i}.json`),
            '--server-seed',
            serverSeed,
            '--expect',
            join(dir, `opening-${i}.json`),
          ]);
          expect(out.stdout).toMatch(/matches/i);
        }
        // A tampered item is refused (exit 1).
        const tampered = structuredClone(cases[0]!.opening);
        tampered.collectibles[0]!.id = tampered.collectibles[0]!.id === 'sea-kraken' ? 'sea-leviathan' : 'sea-kraken';
        await writeFile(join(dir, 'tampered.json'), JSON.stringify(tampered));
        await expect(
          run(process.execPath, [
            'scripts/verify-opening.mjs',
            '--banner',
            join(dir, 'banner-0.json'),
            '--server-seed',
            serverSeed,
            '--expect',
            join(dir, 'tampered.json'),
          ]),
        ).rejects.toMatchObject({ code: 1 });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it("converts spark points left once the group's banners ended into the spark currency, once, and refuses the spark after; a group with a banner running keeps them", async () => {
      const p = await registerPlayer(stack, apiKey);
      await studioGrant(stack, p, 'coins', '100000');
      const pulled = await pull(p, 'ebb', 10);
      expect(pulled.statusCode, pulled.body).toBe(200);
      expect(pulled.json().meta.player.spark_points).toBe(10);
      expect((await spark(p, 'ebb', 'sea-kraken')).statusCode).toBe(201);
      expect((await pull(p, 'ebb', 1)).json().meta.player.spark_points).toBe(1);
      // A point in the tides group, whose tide-one ends now but tide-two runs on: it stays, to be spent on tide-two.
      expect((await pull(p, 'tide-one', 1)).json().meta.player.spark_points).toBeGreaterThanOrEqual(1);
      const tides = async () =>
        (
          await sql<{ spark_points: number; settled_points: number }>(
            stack,
            "SELECT spark_points, settled_points FROM chests.banner_standings WHERE player_id = $1 AND pity_group = 'tides'",
            [p.id],
          )
        )[0]!;
      const tidesBefore = await tides();
      const ended = structuredClone(content);
      const past = new Date(Date.now() - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      ended.banners!.find((b) => b.slug === 'ebb')!.ends_at = past;
      ended.banners!.find((b) => b.slug === 'tide-one')!.ends_at = past;
      await stack.bus.request(AdminLoadContent, { appId, content: ended }, { requestId: randomUUID() });
      const settled = await eventually(async () => {
        const [row] = await sql<{ points: number; settled_points: number | null }>(
          stack,
          "SELECT spark_points AS points, settled_points FROM chests.banner_standings WHERE player_id = $1 AND pity_group = 'ebb'",
          [p.id],
        );
        expect(row!.settled_points).toBe(1);
        return row!;
      }, 20_000);
      expect(settled.points).toBe(0);
      expect(await tides()).toEqual(tidesBefore);
      const credits = await eventually(async () => {
        const rows = await sql<{ amount: string }>(
          stack,
          "SELECT delta AS amount FROM wallet.ledger WHERE player_id = $1 AND reason = 'spark_conversion'",
          [p.id],
        );
        expect(rows).toHaveLength(1);
        return rows;
      }, 20_000);
      expect(Number(credits[0]!.amount)).toBe(1);
      expectError(await spark(p, 'ebb', 'sea-kraken'), 409, 'banner_not_active');
      expectError(await pull(p, 'ebb', 1), 409, 'banner_not_active');
    });

    it('refuses a pull before the window opens and after it closes (409 banner_not_active), debiting nothing', async () => {
      const p = await registerPlayer(stack, apiKey);
      await studioGrant(stack, p, 'coins', '100000');
      const before = (await wallet(stack, p)).coins!.balance;
      const early = expectError(await pull(p, 'later', 1), 409, 'banner_not_active');
      expect((early[0] as { meta?: unknown }).meta).toHaveProperty('starts_at');
      expectError(await pull(p, 'over', 10), 409, 'banner_not_active');
      expect((await wallet(stack, p)).coins!.balance).toBe(before);
    });
  });
});

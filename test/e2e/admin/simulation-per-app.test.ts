import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { createApp } from '../../../services/chests/test/support/chests.js';

// One simulation per app, running or waiting, through the gateway and chests: the odds simulator
// (POST /api/v1/admin/chests/{id}/simulation) and the banner stats' simulation
// (GET /api/v1/admin/banners/{id}/stats) share the rule. One simulation at a time in the chests
// process (SIMULATION_MAX_CONCURRENT=1, a two-core machine's default), so a second app's waits.

type App = { appId: string; publishableKey: string; secretKey: string };

/** The demo content with the costliest Silver Chest a tenant may write (50 items and 10 bonus per opening): a 100,000-opening run lasts seconds. */
function heavyContent(): AppContent {
  const base = readContentFile();
  return {
    ...base,
    chests: base.chests.map((c) =>
      c.id === 'silver-chest'
        ? { ...c, rules: { ...c.rules, items: { fixed: 50 }, bonus: [{ chance: 1, count: 10, min_rarity: base.rarities[0]!.id }] } }
        : c,
    ),
  };
}

describe('one simulation per app, running or waiting (429 simulation_busy)', () => {
  let stack: TestStack;
  let apps: App[];
  beforeAll(async () => {
    stack = await startStack({
      services: ['players', 'chests'],
      env: { SIMULATION_MAX_CONCURRENT: '1', SIMULATION_QUEUE_WAIT_MS: '60000' },
    });
    apps = await Promise.all([
      createApp(stack, heavyContent()),
      createApp(stack, heavyContent()),
      createApp(stack),
      createApp(stack),
      createApp(stack),
    ]);
    // Each new app's content reaches the chests service within moments.
    for (const app of apps) await eventually(async () => expect((await simulate(app, 1)).statusCode).toBe(200), 20_000);
  });
  afterAll(async () => stack?.close());

  const simulate = (app: App, opens: number) =>
    stack.inject({
      method: 'POST',
      url: '/api/v1/admin/chests/silver-chest/simulation',
      headers: jsonApiHeaders(app.secretKey),
      payload: { data: { type: 'simulation', attributes: { opens } } },
    });
  const stats = (app: App) =>
    stack.inject({
      method: 'GET',
      url: '/api/v1/admin/banners/kraken-rising/stats',
      headers: { apikey: app.secretKey, accept: 'application/vnd.api+json' },
    });

  /** The apps whose simulation lock (the Postgres advisory lock chests holds while a simulation of it waits or runs) is held now. */
  const locked = async (): Promise<string[]> => {
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query<{ app: string }>(
        `SELECT a.app FROM unnest($1::text[]) AS a(app)
           JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
            AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('ccs.simulation:' || a.app, 0)`,
        [apps.map((a) => a.appId)],
      );
      return rows.map((r) => r.app);
    } finally {
      await db.end();
    }
  };

  /** A 429 simulation_busy with its Retry-After. */
  function expectBusy(res: Awaited<ReturnType<typeof simulate>>) {
    expectError(res, 429, 'simulation_busy');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(15);
    expect(res.json().errors[0].meta.retry_after_seconds).toBe(Number(res.headers['retry-after']));
  }

  it('runs exactly one of eight concurrent 100,000-opening simulations of an app; seven get 429 with Retry-After', { timeout: 180_000 }, async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => simulate(apps[2]!, 100_000)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 429, 429, 429, 429, 429, 429, 429]);
    expectJsonApi(answers.find((r) => r.statusCode === 200)!.json());
    for (const r of answers.filter((x) => x.statusCode === 429)) expectBusy(r);
    expect(await locked()).toEqual([]);
  });

  it(
    "refuses an app's simulation and banner stats while one of the app runs or waits its turn; other apps' wait, and run",
    { timeout: 120_000 },
    async () => {
      const [running, waiting, other] = [apps[0]!, apps[1]!, apps[3]!];
      const first = simulate(running, 100_000);
      await expect.poll(locked, { timeout: 20_000 }).toEqual([running.appId]);
      // Its banner stats would run a simulation of the app: refused while the first runs.
      expectBusy(await stats(running));

      // The process's one turn is taken: the second app's simulation waits for it, holding its app.
      const queued = simulate(waiting, 100_000);
      await expect.poll(async () => (await locked()).sort(), { timeout: 20_000 }).toEqual([running.appId, waiting.appId].sort());
      expectBusy(await simulate(waiting, 10));
      expectBusy(await stats(waiting));
      // A third app is not refused for the others: it waits its turn too, and a fourth's banner
      // stats wait for theirs (the gateway waits as long as for a simulation).
      const third = simulate(other, 1_000);
      const fourth = stats(apps[4]!);

      for (const res of await Promise.all([first, queued, third, fourth])) {
        expect(res.statusCode, res.body).toBe(200);
        expectJsonApi(res.json());
      }
      expect(await locked()).toEqual([]);
      // Once they ended, the apps' banner stats run.
      for (const app of [running, waiting]) expect((await stats(app)).statusCode).toBe(200);
    },
  );
});

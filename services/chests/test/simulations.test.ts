import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, readContentFile } from '@ccs/shared';
import { testInfra } from '@ccs/shared/testing';
import { Simulations, type SimulationLimits } from '../src/simulation/runner.js';
import type { SimulationJob } from '../src/simulation/job.js';

// The bounds of odds simulations (src/simulation/runner.ts) against the real Postgres: the cap per
// process and its queue, the timeout, and the per-app advisory lock shared by two chests replicas,
// held while a simulation runs or waits for its turn.
// The whole route (429 simulation_busy through the gateway) is in test/security/hostile-studio.test.ts.

let pool: pg.Pool;
let databaseUrl: string;
const running: Simulations[] = [];
/** The apps this file simulated: their locks are the ones it looks at. */
const apps: string[] = [];

beforeAll(async () => {
  databaseUrl = (await testInfra()).databaseUrl;
  pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
});
afterAll(async () => {
  await Promise.all(running.map((s) => s.close()));
  await pool.end();
});

/** A fresh app id, remembered for locks(). */
function appId(): string {
  const id = randomUUID();
  apps.push(id);
  return id;
}

/** A Silver Chest run of the default content, as the route builds it from chests' drop inputs. */
function job(opens: number, heavy = false): SimulationJob {
  const content = readContentFile();
  const silver = content.chests.find((c) => c.id === 'silver-chest')!;
  return {
    rules: heavy ? { ...silver.rules, items: { fixed: 50 }, bonus: [{ chance: 1, count: 10, min_rarity: content.rarities[0]!.id }] } : silver.rules,
    rarities: content.rarities.map((r) => ({ id: r.id, drop_rate: r.drop_rate, rank: r.rank })),
    collectibles: content.collections.flatMap((c) => c.collectibles.map((x) => ({ id: x.id, collectionId: c.id, rarity: x.rarity }))),
    opens,
    seed: 'c0ffee',
  };
}

function simulations(limits: Partial<SimulationLimits> = {}) {
  const s = new Simulations(databaseUrl, { maxConcurrent: 1, maxQueued: 8, queueWaitMs: 10_000, timeoutMs: 60_000, ...limits });
  running.push(s);
  return s;
}

/** The AppError a promise rejects with. */
async function failure(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

/** The simulation locks held on this file's apps (Postgres advisory locks, any session). */
async function locks(): Promise<string[]> {
  const { rows } = await pool.query<{ app: string }>(
    `SELECT a.app FROM unnest($1::text[]) AS a(app)
       JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
        AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('ccs.simulation:' || a.app, 0)`,
    [apps],
  );
  return rows.map((r) => r.app);
}

describe('bounded simulations', () => {
  it('runs the production roll in a worker thread: the same seed gives the same report', { timeout: 180_000 }, async () => {
    const s = simulations();
    const [a, b] = [await s.run(appId(), job(2_000)), await s.run(appId(), job(2_000))];
    expect(a.opens).toBe(2_000);
    expect(a.rarities).toEqual(b.rarities);
    expect(a.rarities.reduce((n, r) => n + r.count, 0)).toBe(a.items);
    expect(await locks()).toEqual([]);
  });

  it('holds one per app across two chests replicas (a Postgres advisory lock), with Retry-After', { timeout: 180_000 }, async () => {
    const app = appId();
    const [one, two] = [simulations({ maxConcurrent: 2 }), simulations({ maxConcurrent: 2 })];
    // A run that outlasts the test: it ends when the test stops it (below), however fast the machine.
    const long = one.run(app, job(10_000_000, true));
    await expect.poll(locks).toHaveLength(1);
    const busy = await failure(two.run(app, job(10)));
    expect([busy.kind, busy.code]).toEqual(['rate_limited', 'simulation_busy']);
    expect(busy.errors[0]!.meta!.retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect(busy.errors[0]!.meta!.retry_after_seconds).toBeLessThanOrEqual(15);
    // Another app is not held by it.
    expect((await two.run(appId(), job(10))).opens).toBe(10);
    await one.close();
    await expect(long).rejects.toThrow();
    await expect.poll(locks).toEqual([]);
    expect((await two.run(app, job(10))).opens).toBe(10);
  });

  it(
    'holds an app while its simulation waits for a turn: another replica refuses it (429); past maxQueued, 503 overloaded at once',
    { timeout: 180_000 },
    async () => {
      const [busyApp, waitingApp] = [appId(), appId()];
      const one = simulations({ maxConcurrent: 1, maxQueued: 1, queueWaitMs: 600_000, timeoutMs: 600_000 });
      const two = simulations({ maxConcurrent: 1 });
      // A run that outlasts the test: it ends when the test stops it (below), however fast the machine.
      const long = one.run(busyApp, job(10_000_000, true));
      await expect.poll(locks).toEqual([busyApp]);
      const queued = one.run(waitingApp, job(10));
      await expect.poll(async () => (await locks()).sort()).toEqual([busyApp, waitingApp].sort());
      // Waiting on replica one, the app is refused on replica two, which has turns free.
      expect((await failure(two.run(waitingApp, job(10)))).code).toBe('simulation_busy');
      // One waits already on replica one: a third app is refused there at once, without its lock.
      const full = await failure(one.run(appId(), job(10)));
      expect([full.kind, full.code]).toEqual(['overloaded', 'overloaded']);
      // Stopping the running one gives the waiting one its turn; both apps are free after.
      await one.close();
      await expect(long).rejects.toThrow();
      expect((await queued).opens).toBe(10);
      await expect.poll(locks).toEqual([]);
    },
  );

  it("frees a crashed holder's app: its connection ends, and its lock with it", { timeout: 180_000 }, async () => {
    const app = appId();
    // As if another replica held the lock and died: a session of its own takes it.
    const other = new pg.Client({ connectionString: databaseUrl });
    await other.connect();
    await other.query('BEGIN');
    const { rows } = await other.query<{ pid: number }>(
      `SELECT pg_try_advisory_xact_lock(hashtextextended('ccs.simulation:' || $1, 0)), pg_backend_pid() AS pid`,
      [app],
    );
    const s = simulations();
    expect((await failure(s.run(app, job(10)))).code).toBe('simulation_busy');
    other.on('error', () => undefined);
    await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await expect.poll(locks).toEqual([]);
    expect((await s.run(app, job(10))).opens).toBe(10);
    await other.end().catch(() => undefined);
  });

  it(
    'runs at most maxConcurrent at once in a process: others wait their turn, or get 503 overloaded when the wait is over',
    { timeout: 180_000 },
    async () => {
      const queued = simulations({ maxConcurrent: 1, queueWaitMs: 30_000 });
      const order: string[] = [];
      const a = queued.run(appId(), job(20_000, true)).then(() => order.push('a'));
      // The app's lock comes before the queue: b asks once a holds its lock, so a is first in line.
      await expect.poll(locks).toHaveLength(1);
      const b = queued.run(appId(), job(10)).then(() => order.push('b'));
      await Promise.all([a, b]);
      // The small run waited for the big one's turn to end.
      expect(order).toEqual(['a', 'b']);

      const impatient = simulations({ maxConcurrent: 1, queueWaitMs: 50, timeoutMs: 600_000 });
      const long = impatient.run(appId(), job(10_000_000, true));
      await expect.poll(locks).toHaveLength(1);
      const refused = await failure(impatient.run(appId(), job(10)));
      expect([refused.kind, refused.code]).toEqual(['overloaded', 'overloaded']);
      expect(refused.errors[0]!.meta!.retry_after_seconds).toBeGreaterThanOrEqual(1);
      await impatient.close();
      await expect(long).rejects.toThrow();
      await expect.poll(locks).toEqual([]);
    },
  );

  it('stops a run that takes longer than timeoutMs (503 simulation_timeout) and frees its app', { timeout: 180_000 }, async () => {
    const s = simulations({ timeoutMs: 50 });
    const app = appId();
    const err = await failure(s.run(app, job(30_000, true)));
    expect([err.kind, err.code]).toEqual(['unavailable', 'simulation_timeout']);
    expect(await locks()).toEqual([]);
  });
});

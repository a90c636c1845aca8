import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, readContentFile } from '@ccs/shared';
import { testInfra } from '@ccs/shared/testing';
import { Simulations, type SimulationLimits } from '../src/simulation/runner.js';
import type { SimulationJob } from '../src/simulation/job.js';

// The bounds of odds simulations (src/simulation/runner.ts) against the real Redis: the cap per
// process and its queue, the timeout, and the per-app lock shared by two gateway replicas. The
// whole route (429 simulation_busy through the gateway) is in test/security/hostile-studio.test.ts.

let redis: Redis;
const prefix = `tsim${randomBytes(4).toString('hex')}:`;
const running: Simulations[] = [];

beforeAll(async () => {
  redis = new Redis((await testInfra()).redisUrl, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await Promise.all(running.map((s) => s.close()));
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

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
  const s = new Simulations(redis, prefix, { maxConcurrent: 1, queueWaitMs: 10_000, timeoutMs: 60_000, lockTtlMs: 15_000, ...limits });
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

const locks = () => redis.keys(`${prefix}simulation:*`);

describe('bounded simulations', () => {
  it('runs the production roll in a worker thread: the same seed gives the same report', { timeout: 60_000 }, async () => {
    const s = simulations();
    const [a, b] = [await s.run(randomUUID(), job(2_000)), await s.run(randomUUID(), job(2_000))];
    expect(a.opens).toBe(2_000);
    expect(a.rarities).toEqual(b.rarities);
    expect(a.rarities.reduce((n, r) => n + r.count, 0)).toBe(a.items);
    expect(await locks()).toEqual([]);
  });

  it('holds one per app across two gateway replicas (the lock is in Redis), Retry-After from its time to live', { timeout: 60_000 }, async () => {
    const app = randomUUID();
    const [one, two] = [simulations({ maxConcurrent: 2 }), simulations({ maxConcurrent: 2 })];
    const long = one.run(app, job(30_000, true));
    await expect.poll(locks).toHaveLength(1);
    const busy = await failure(two.run(app, job(10)));
    expect([busy.status, busy.code]).toEqual([429, 'simulation_busy']);
    expect(busy.errors[0]!.meta!.retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect(busy.errors[0]!.meta!.retry_after_seconds).toBeLessThanOrEqual(15);
    // Another app is not held by it.
    expect((await two.run(randomUUID(), job(10))).opens).toBe(10);
    expect((await long).opens).toBe(30_000);
    expect(await locks()).toEqual([]);
    expect((await two.run(app, job(10))).opens).toBe(10);
  });

  it("never frees another holder's lock: a run whose lock expired and was taken leaves the new one", { timeout: 60_000 }, async () => {
    const app = randomUUID();
    const s = simulations({ lockTtlMs: 60_000 });
    const run = s.run(app, job(30_000, true));
    await expect.poll(locks).toHaveLength(1);
    // As if the lock had expired and another replica had taken it.
    await redis.set(`${prefix}simulation:${app}`, 'another-holder', 'PX', 60_000);
    await run;
    expect(await redis.get(`${prefix}simulation:${app}`)).toBe('another-holder');
    await redis.del(`${prefix}simulation:${app}`);
  });

  it(
    'runs at most maxConcurrent at once in a process: others wait their turn, or get 503 overloaded when the wait is over',
    { timeout: 60_000 },
    async () => {
      const queued = simulations({ maxConcurrent: 1, queueWaitMs: 30_000 });
      const order: string[] = [];
      const a = queued.run(randomUUID(), job(20_000, true)).then(() => order.push('a'));
      const b = queued.run(randomUUID(), job(10)).then(() => order.push('b'));
      await Promise.all([a, b]);
      // The small run waited for the big one's turn to end.
      expect(order).toEqual(['a', 'b']);

      const impatient = simulations({ maxConcurrent: 1, queueWaitMs: 50 });
      const long = impatient.run(randomUUID(), job(5_000, true));
      const refused = await failure(impatient.run(randomUUID(), job(10)));
      expect([refused.status, refused.code]).toEqual([503, 'overloaded']);
      expect(refused.errors[0]!.meta!.retry_after_seconds).toBeGreaterThanOrEqual(1);
      await long;
      expect(await locks()).toEqual([]);
    },
  );

  it('stops a run that takes longer than timeoutMs (503 simulation_timeout) and frees its app', { timeout: 60_000 }, async () => {
    const s = simulations({ timeoutMs: 50 });
    const app = randomUUID();
    const err = await failure(s.run(app, job(30_000, true)));
    expect([err.status, err.code]).toEqual([503, 'simulation_timeout']);
    expect(await locks()).toEqual([]);
  });
});

/**
 * `npm run bench`: starts the stack as separate processes on a throwaway database, prepares
 * players and chests through the API, and measures each scenario with autocannon next to a floor
 * (a bare Fastify route doing one NATS request-reply to an echo handler) measured in the same
 * run. Prints one table of ratios to the floor and saves it under bench/results/.
 */
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createTestDatabase, deleteTestStreams, testInfra } from '@ccs/shared/testing';
import { preparePlayers } from './fixtures.js';
import { ROOT, spawnTs, stopAll, waitFor } from './stack-process.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PLAYERS = Number(process.env.BENCH_PLAYERS ?? 12);
const log = (s: string) => console.log(`[bench] ${s}`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.once('error', reject);
  });
}

interface Row {
  scenario: string;
  requests: number;
  rps: number;
  mean: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function measure(scenario: string, opts: autocannon.Options): Promise<Row> {
  log(`measuring ${scenario} ...`);
  // A fixed `amount` (openings: one fresh chest each) replaces the duration.
  const r = await autocannon(opts.amount ? { connections: CONNECTIONS, ...opts } : { connections: CONNECTIONS, duration: DURATION, ...opts });
  const row: Row = {
    scenario,
    requests: r.requests.total,
    rps: Math.round(r.requests.average),
    mean: r.latency.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  };
  log(`${scenario}: ${row.rps} req/s, mean ${row.mean.toFixed(2)} ms, p50 ${row.p50} ms, p99 ${row.p99} ms, non-2xx ${row.non2xx}, errors ${row.errors}`);
  return row;
}

async function main() {
  const infra = await testInfra();
  const db = await createTestDatabase(infra);
  const id = randomBytes(3).toString('hex');
  const [port, floorPort] = [await freePort(), await freePort()];
  const apiKey = `bench_${randomBytes(12).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: infra.natsUrl,
    REDIS_URL: infra.redisUrl,
    NATS_PREFIX: `bench${id}`,
    REDIS_PREFIX: `bench${id}:`,
    CHESTS_DEMO_API_KEY: apiKey,
    RATE_LIMIT: 'off',
    LOG_LEVEL: 'warn',
    PORT: String(port),
  };
  const children = [];
  try {
    log('starting the stack (players first, it seeds the demo app) ...');
    children.push(spawnTs('services/players/src/main.ts', env, 'players'));
    await new Promise((r) => setTimeout(r, 3000));
    for (const s of ['wallet', 'chests', 'collections']) children.push(spawnTs(`services/${s}/src/main.ts`, env, s));
    children.push(spawnTs('services/gateway/src/main.ts', env, 'gateway'));
    children.push(spawnTs('bench/floor-server.ts', { ...env, PORT: String(floorPort) }, 'floor'));
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/readyz`, 60_000, 'the stack');
    await waitFor(`http://127.0.0.1:${floorPort}/echo`, 20_000, 'the floor server');
    log('stack ready; preparing players and chests through the API ...');
    const fx = await preparePlayers(base, apiKey, PLAYERS, 91, log);
    const auth = (token: string) => ({ apikey: apiKey, accept: 'application/vnd.api+json', authorization: `Bearer ${token}` });
    const anon = { apikey: apiKey, accept: 'application/vnd.api+json' };
    const p0 = fx.players[0]!;

    const rows: Row[] = [];
    rows.push(await measure('floor: gateway→NATS→echo', { url: `http://127.0.0.1:${floorPort}/echo` }));
    rows.push(await measure('catalog list', { url: `${base}/api/v1/chests`, headers: anon }));
    rows.push(await measure('one collectible', { url: `${base}/api/v1/collectibles/${fx.collectibleId}`, headers: auth(p0.token) }));
    rows.push(await measure('inventory read', { url: `${base}/api/v1/players/${p0.id}/chests`, headers: auth(p0.token) }));
    // Each request opens a chest nobody opened before: a shared queue of prepared chests.
    const queue = fx.players.flatMap((p) => p.chests.map((c) => ({ chest: c, token: p.token })));
    const total = queue.length;
    rows.push(
      await measure('chest opening', {
        url: base,
        amount: total,
        requests: [
          {
            method: 'GET',
            setupRequest: (req) => {
              const next = queue.pop();
              if (!next) return req;
              return { ...req, path: `/api/v1/chests/${next.chest}/open`, headers: { ...auth(next.token) } };
            },
          },
        ],
      }),
    );
    rows.push(
      await measure('credit', {
        url: `${base}/api/v1/currencies/${fx.coinsId}/credit`,
        method: 'POST',
        headers: { ...auth(p0.token), 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '0.01' }),
      }),
    );
    report(rows, { duration: DURATION, connections: CONNECTIONS, chestsOpened: total });
  } finally {
    log('stopping the stack ...');
    await stopAll(children);
    await deleteTestStreams(infra.natsUrl, env.NATS_PREFIX!);
    await dropRedisKeys(infra.redisUrl, env.REDIS_PREFIX!);
    await db.drop();
  }
}

/** Removes this run's cache and rate-limit keys, so runs leave nothing behind in Redis. */
async function dropRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

function report(rows: Row[], settings: Record<string, number>) {
  const floor = rows[0]!;
  const table = rows.map((r) => ({
    scenario: r.scenario,
    'req/s': r.rps,
    'mean ms': +r.mean.toFixed(2),
    'p50 ms': r.p50,
    'p99 ms': r.p99,
    'throughput ÷ floor': +(r.rps / floor.rps).toFixed(3),
    'mean latency ÷ floor': +(r.mean / Math.max(floor.mean, 0.01)).toFixed(1),
    'p50 ÷ floor': +(r.p50 / Math.max(floor.p50, 0.01)).toFixed(2),
    'p99 ÷ floor': +(r.p99 / Math.max(floor.p99, 0.01)).toFixed(2),
    'non-2xx': r.non2xx,
  }));
  console.table(table);
  const dir = path.join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), settings, rows: table }, null, 2) + '\n');
  log(`saved ${path.relative(ROOT, file)}`);
}

main().catch((err) => {
  console.error(`[bench] failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

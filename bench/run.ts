/**
 * `npm run bench`: starts the stack as separate processes (as `npm start` does) on a throwaway
 * database, NATS prefix and Redis prefix, next to the floor processes; creates its own app with
 * the bench content (bench/content.ts); prepares players, chests and collections through the API;
 * then measures every scenario (bench/scenarios.ts) and every floor at each connection count, and
 * a scale-out phase with a second replica of chests and of collections. Each row is reported as a
 * ratio to its own floor; the tables are printed and saved under bench/results/. Everything it
 * created is removed at the end, on failure and on Ctrl-C too. How to run it: docs/performance.md.
 */
import { connect } from 'nats';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createTestDatabase, deleteRedisKeys, freePort, testInfra } from '@ccs/shared/testing';
import { waitForGateway, waitForServiceHealth } from '../scripts/start/wait-ready.js';
import { writeBenchContent } from './content.js';
import { CpuMeter, pidsNamed, type CpuSource } from './cpu.js';
import { Api, createApp, Fixtures } from './fixtures.js';
import { measure, type Load, type Measured } from './measure.js';
import { compareScale, withRatios, writeReport, type Row } from './report.js';
import { FLOORS, SCENARIOS, type FloorKind, type Plan, type Prepared, type Scenario } from './scenarios.js';
import { spawnTs, stopAll, waitFor, type BenchProcess } from './stack-process.js';
import { asRole, startStatementsCluster, StatementMeter } from './statements.js';

const log = (s: string) => console.log(`[bench] ${s}`);

/** A bad setting stops the bench at once with one line naming it. */
function badSetting(message: string): never {
  console.error(`[bench] ${message}; see docs/performance.md`);
  process.exit(2);
}

const USAGE = `npm run bench: measures the stack against its floors (docs/performance.md). Settings are environment variables:
  BENCH_ONLY=a,b            only the scenarios (and floors) whose names contain one of these words
  BENCH_CONNECTIONS=16,50   concurrent connections, one round per count
  BENCH_DURATION=8          seconds measured per round; BENCH_WARMUP=1 seconds of warm-up
  BENCH_SCALE=on|off        the scale-out phase with a second replica of chests and collections
  BENCH_MAX_OPEN_RATE=1500, BENCH_MAX_PURCHASE_RATE=1500   caps of the write scenarios (requests/s)
  BENCH_LOG_LEVEL=warn      the services' log level
  BENCH_STATEMENTS=1        Postgres per statement: the stack runs on a private cluster with pg_stat_statements
                            (each service its own role); a table per scenario, reset before each measurement
It creates its own database, NATS prefix and Redis prefix, and removes them at the end, on failure and on Ctrl-C.
Example: BENCH_ONLY=open,batch BENCH_CONNECTIONS=50 npm run bench`;

// Options are environment variables; the command line takes only --help.
const args = process.argv.slice(2);
if (args.some((a) => a === '--help' || a === '-h')) {
  console.log(USAGE);
  process.exit(0);
}
if (args.length) badSetting(`unknown argument ${JSON.stringify(args[0])} (settings are environment variables: npm run bench -- --help)`);

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) badSetting(`${name} must be a number ≥ 0, not "${raw}"`);
  return n;
}

const DURATION = positive('BENCH_DURATION', 8);
if (DURATION < 1) badSetting(`BENCH_DURATION must be at least 1 second, not "${process.env.BENCH_DURATION}"`);
const WARMUP = positive('BENCH_WARMUP', 1);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS || '16,50').split(',').map((c) => {
  const n = Number(c.trim());
  if (!Number.isInteger(n) || n < 1) badSetting(`BENCH_CONNECTIONS must be a comma list of whole numbers, not "${process.env.BENCH_CONNECTIONS}"`);
  return n;
});
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
const SCALE = !['off', '0', 'false', 'no'].includes((process.env.BENCH_SCALE ?? 'on').toLowerCase());
/** Postgres per statement (bench/statements.ts): a private cluster with pg_stat_statements. */
const STATEMENTS = ['on', '1', 'true', 'yes'].includes((process.env.BENCH_STATEMENTS ?? 'off').toLowerCase());
/** The fastest openings and purchases per second the preparation provisions for. */
const MAX_OPEN_RATE = positive('BENCH_MAX_OPEN_RATE', 1500);
const MAX_PURCHASE_RATE = positive('BENCH_MAX_PURCHASE_RATE', 1500);
/** The cheapest argon2id settings services/players/src/config.ts accepts. */
const ARGON2 = { memoryKib: 1024, timeCost: 1 };
const SCALE_CONNECTIONS = Math.max(...CONNECTIONS);

const picked = (name: string) => !ONLY.length || ONLY.some((o) => name.toLowerCase().includes(o));
const selected = SCENARIOS.filter((s) => picked(s.name));
const floorKinds = (Object.keys(FLOORS) as FloorKind[]).filter(
  (k) => selected.some((s) => s.floor === k) || (ONLY.length > 0 && picked(FLOORS[k].name)),
);
const scaled = SCALE ? selected.filter((s) => s.scale) : [];

const PLAN: Plan = {
  maxRate: { openings: MAX_OPEN_RATE, purchases: MAX_PURCHASE_RATE },
  connections: Math.max(...CONNECTIONS),
  argon2: ARGON2,
};

async function main() {
  if (!selected.length && !floorKinds.length) {
    throw new Error(
      `BENCH_ONLY="${process.env.BENCH_ONLY}" matches nothing; scenarios: ${[...Object.values(FLOORS).map((f) => f.name), ...SCENARIOS.map((s) => s.name)].join(', ')}`,
    );
  }
  const started = Date.now();
  const infra = await testInfra();
  const id = randomBytes(3).toString('hex');
  const prefix = `bench${id}`;
  const contentFile = path.join(os.tmpdir(), `ccs-bench-content-${id}.json`);
  const procs: BenchProcess[] = [];
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let monitor: pg.Client | undefined;
  let cluster: Awaited<ReturnType<typeof startStatementsCluster>> | undefined;

  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      log('stopping the stack and removing what the bench created (database, NATS streams, Redis keys) ...');
      await monitor?.end().catch(() => undefined);
      await stopAll(procs);
      const steps: [string, () => Promise<unknown>][] = [
        ['NATS streams', () => deleteStreams(infra.natsUrl, prefix)],
        ['Redis keys', () => deleteRedisKeys(infra.redisUrl, `${prefix}:`)],
        ['database', () => db?.drop() ?? Promise.resolve()],
        ['private Postgres cluster', () => cluster?.destroy() ?? Promise.resolve()],
      ];
      for (const [what, step] of steps) await step().catch((err) => console.error(`[bench] could not remove the ${what}: ${String(err)}`));
      rmSync(contentFile, { force: true });
      log('cleaned up');
    })());
  // Ctrl-C reaches the bench twice at once (from the terminal, and relayed by npm and tsx):
  // every signal must be handled, or the second one would end the process in the middle of its
  // cleanup. Only a signal well after the first (a second Ctrl-C) gives up on cleaning up.
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt) {
      if (Date.now() - firstSignalAt < 2000) return;
      console.error(
        `[bench] ${signal} again: exiting without finishing the cleanup (prefix ${prefix}, ${db ? `database ${new URL(db.url).pathname.slice(1)}` : 'no database yet'})`,
      );
      process.exit(130);
    }
    firstSignalAt = Date.now();
    log(`${signal}: cleaning up before exiting (Ctrl-C again to skip)`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    if (STATEMENTS) {
      log('BENCH_STATEMENTS: starting a private Postgres cluster with pg_stat_statements ...');
      cluster = await startStatementsCluster();
    }
    db = await createTestDatabase(cluster ? { ...infra, databaseUrl: cluster.url } : infra);
    // With BENCH_STATEMENTS each process connects as its own role, so each statement has an owner.
    const dbUrl = (role: string) => (cluster ? asRole(db!.url, role) : db!.url);
    const [port, floorPort] = [await freePort(), await freePort()];
    const env: Record<string, string> = {
      DATABASE_URL: db.url,
      NATS_URL: infra.natsUrl,
      REDIS_URL: infra.redisUrl,
      NATS_PREFIX: prefix,
      REDIS_PREFIX: `${prefix}:`,
      RATE_LIMIT: 'off',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      PORT: String(port),
      // As npm start: no per-service health port (the gateway's /readyz covers every service).
      HEALTH_PORT: '0',
      // Registration measures the saga, not the password hash: the cheapest settings accepted.
      ARGON2_MEMORY_KIB: String(ARGON2.memoryKib),
      ARGON2_TIME_COST: String(ARGON2.timeCost),
    };
    const base = `http://127.0.0.1:${port}`;
    const floorBase = `http://127.0.0.1:${floorPort}`;

    log(`database ${new URL(db.url).pathname.slice(1)}, NATS prefix ${prefix}, Redis prefix ${prefix}:`);
    log('starting the stack as npm start does (players first, then wallet, chests, collections, egress, gateway) ...');
    if (floorKinds.length) {
      procs.push(spawnTs('bench/floor-responder.ts', { ...env, DATABASE_URL: dbUrl('bench_floor') }, 'floor responder'));
      procs.push(spawnTs('bench/floor-server.ts', { ...env, PORT: String(floorPort) }, 'floor front'));
    }
    procs.push(spawnTs('services/players/src/main.ts', { ...env, DATABASE_URL: dbUrl('players') }, 'players'));
    const dead = () => procs.find((p) => p.unexpectedExit);
    const aborted = () => dead() !== undefined;
    const deadError = (err: unknown) => {
      const d = dead();
      return d ? new Error(`${d.label} stopped while the stack started (${d.unexpectedExit}); its output is above`) : err;
    };
    await waitForServiceHealth({ natsUrl: infra.natsUrl, prefix, service: 'players', timeoutMs: 120_000, aborted }).catch((err) => {
      throw deadError(err);
    });
    for (const s of ['wallet', 'chests', 'collections', 'egress', 'gateway'])
      procs.push(spawnTs(`services/${s}/src/main.ts`, { ...env, DATABASE_URL: dbUrl(s) }, s));
    await waitForGateway({ url: base, timeoutMs: 120_000, aborted, progress: log }).catch((err) => {
      throw deadError(err);
    });
    for (const k of floorKinds) await waitFor(`${floorBase}${FLOORS[k].path}`, 30_000, FLOORS[k].name);
    log(`stack ready (${Math.round((Date.now() - started) / 1000)} s)`);

    writeBenchContent(contentFile);
    const app = await createApp(env, `bench ${id}`, contentFile, log);
    const api = new Api(base, app.publishableKey);
    const fx = new Fixtures(api, id, log);
    const prepared = new Map<Scenario, Prepared>();
    const notes: string[] = [];
    log(`preparing data through the API for: ${selected.map((s) => s.name).join(', ') || 'floors only'}`);
    for (const s of selected) {
      const t = Date.now();
      const ready = await s.prepare({ api, fx, plan: PLAN });
      // Consuming scenarios: enough for the warm-up and the first run now, topped up before the others.
      await ready.load.topUp?.(WARMUP + DURATION);
      prepared.set(s, ready);
      log(`prepared "${s.name}" (${Math.round((Date.now() - t) / 100) / 10} s)`);
    }
    log(`prepared in ${Math.round((Date.now() - started) / 1000)} s since the start`);

    // CPU accounting: every bench process, the bench database's Postgres backends, NATS, Redis.
    monitor = new pg.Client({ connectionString: db.url });
    await monitor.connect();
    const statements = cluster ? new StatementMeter(monitor) : undefined;
    await statements?.install();
    const natsPids = pidsNamed('nats-server');
    const redisPids = pidsNamed('redis-server');
    const cpu = new CpuMeter((): CpuSource[] => [
      ...procs.filter((x) => !x.exited()).map((x) => ({ label: x.label, pids: () => [x.child.pid!] })),
      { label: 'bench', pids: () => [process.pid] },
      {
        label: 'postgres',
        pids: async () =>
          (await monitor!.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')).rows.map((r) => r.pid),
      },
      { label: 'nats', pids: () => natsPids },
      { label: 'redis', pids: () => redisPids },
    ]);

    const rows: Row[] = [];
    const floorsAt = new Map<string, Measured>();
    const run = async (name: string, url: string, load: Load, connections: number, seconds: number) => {
      const d = dead();
      if (d) throw new Error(`${d.label} stopped (${d.unexpectedExit}) before "${name}"; see its output above`);
      await load.topUp?.(seconds);
      await settle(monitor!);
      await statements?.quiet();
      await statements?.reset();
      const m = await measure(url, load, { connections, seconds, cpu });
      if (!statements) return m;
      // The grants and messages the requests left in flight are their work too: let them land.
      await statements.quiet();
      return { ...m, statements: await statements.read(m.sent) };
    };
    const say = (name: string, c: number, m: Measured, r?: Row) => {
      const vs = r && !name.startsWith('floor') ? `; ÷ ${r.floor}: throughput ${r.throughputRatio}, mean ${r.meanRatio}, p99 ${r.p99Ratio}` : '';
      const cpuNote = m.cpu ? `, cpu ${m.cpu.machineBusy}/${m.cpu.cores} busy` : '';
      log(
        `${name} @${c}: ${m.rps} req/s, mean ${m.mean} ms, p50 ${m.p50} ms, p99 ${m.p99} ms, non-2xx ${m.non2xx}, errors ${m.errors}${cpuNote}${vs}`,
      );
      if (m.non2xx || m.errors) {
        log(
          `  ↳ status codes ${JSON.stringify(m.statusCodes)}${m.firstNon2xx ? `; first non-2xx: ${m.firstNon2xx.status} ${m.firstNon2xx.body.replace(/\s+/g, ' ').slice(0, 300)}` : ''}`,
        );
      }
    };
    const floorLoad = (k: FloorKind): Load => ({ method: 'GET', path: FLOORS[k].path });

    if (WARMUP > 0) {
      log(`warming up every floor and scenario for ${WARMUP} s at ${CONNECTIONS[0]} connections (not reported) ...`);
      for (const k of floorKinds) await run(FLOORS[k].name, floorBase, floorLoad(k), CONNECTIONS[0]!, WARMUP);
      for (const s of selected) {
        const m = await run(s.name, base, prepared.get(s)!.load, CONNECTIONS[0]!, WARMUP);
        if (m.non2xx || m.errors) say(`${s.name} (warm-up)`, CONNECTIONS[0]!, m);
      }
    }

    // Each floor is measured before and after the scenarios of a connection count, and the
    // faster of the two is the floor: a floor is the least a path can cost, and on a shared
    // machine noise only ever adds to it, so one unlucky floor run would skew every ratio.
    for (const c of CONNECTIONS) {
      const floorRuns = new Map<FloorKind, Measured[]>();
      const measureFloors = async (when: string) => {
        for (const k of floorKinds) {
          log(`measuring ${FLOORS[k].name} at ${c} connections for ${DURATION} s (${when} the scenarios) ...`);
          const m = await run(FLOORS[k].name, floorBase, floorLoad(k), c, DURATION);
          floorRuns.set(k, [...(floorRuns.get(k) ?? []), m]);
          say(FLOORS[k].name, c, m);
        }
      };
      await measureFloors('before');
      const measured: { s: Scenario; m: Measured }[] = [];
      for (const s of selected) {
        log(`measuring ${s.name} at ${c} connections for ${DURATION} s ...`);
        const m = await run(s.name, base, prepared.get(s)!.load, c, DURATION);
        measured.push({ s, m });
        say(
          s.name,
          c,
          m,
          withRatios(
            m,
            { scenario: s.name, connections: c, phase: 'single', floor: `${FLOORS[s.floor].name} (before)` },
            floorRuns.get(s.floor)![0]!,
          ),
        );
      }
      if (selected.length) await measureFloors('after');
      for (const k of floorKinds) {
        const runs = floorRuns.get(k)!;
        const best = runs.reduce((a, b) => (b.rps > a.rps ? b : a));
        floorsAt.set(`${k}@${c}`, best);
        rows.push({
          ...withRatios(best, { scenario: FLOORS[k].name, connections: c, phase: 'single', floor: FLOORS[k].name }, best),
          floorRuns: runs.map((r) => r.rps),
        });
        if (runs.length > 1)
          log(
            `${FLOORS[k].name} @${c}: ${runs.map((r) => r.rps).join(' and ')} req/s before and after the scenarios; the floor is the ${best === runs[0] ? 'first' : 'second'}`,
          );
      }
      for (const { s, m } of measured) {
        rows.push(
          withRatios(m, { scenario: s.name, connections: c, phase: 'single', floor: FLOORS[s.floor].name }, floorsAt.get(`${s.floor}@${c}`)!),
        );
      }
    }

    if (scaled.length) {
      log('scale-out: starting a second replica of chests and of collections (same environment, own health port) ...');
      for (const s of ['chests', 'collections']) {
        const healthPort = await freePort();
        procs.push(spawnTs(`services/${s}/src/main.ts`, { ...env, DATABASE_URL: dbUrl(s), HEALTH_PORT: String(healthPort) }, `${s}#2`));
        await waitFor(`http://127.0.0.1:${healthPort}/readyz`, 120_000, `the second ${s} replica`);
      }
      if (WARMUP > 0) {
        log(`warming the replicas up for ${WARMUP} s per scenario (not reported) ...`);
        for (const s of scaled) await run(s.name, base, prepared.get(s)!.load, SCALE_CONNECTIONS, WARMUP);
      }
      for (const s of scaled) {
        log(`measuring ${s.name} with two replicas at ${SCALE_CONNECTIONS} connections for ${DURATION} s ...`);
        const m = await run(s.name, base, prepared.get(s)!.load, SCALE_CONNECTIONS, DURATION);
        const row = withRatios(
          m,
          { scenario: s.name, connections: SCALE_CONNECTIONS, phase: 'scale-out', floor: FLOORS[s.floor].name },
          floorsAt.get(`${s.floor}@${SCALE_CONNECTIONS}`)!,
        );
        rows.push(row);
        say(`${s.name} [2 replicas]`, SCALE_CONNECTIONS, m, row);
      }
    }

    for (const s of selected) {
      const note = await prepared.get(s)!.describe?.();
      if (note) notes.push(`${s.name}: ${note}.`);
    }
    for (const k of floorKinds) notes.push(`${FLOORS[k].name}: ${FLOORS[k].what}.`);
    if (floorKinds.length)
      notes.push(
        'Floors: the HTTP route (bench/floor-server.ts) and the responders (bench/floor-responder.ts) run in two processes, as the gateway and a service do, with the same packages and connection options.',
      );
    notes.push(`Load generator: autocannon in the bench process, on the same machine (its CPU is the "bench" column).`);
    notes.push(
      `Stack: each service a separate process started as npm start does (node --import tsx --conditions=development), RATE_LIMIT=off, LOG_LEVEL=${env.LOG_LEVEL}, PG_POOL_MAX 10; the bench app's content is the default content with inventory_capacity 2000 and two bench chest types (bench/content.ts).`,
    );
    const report = {
      at: new Date().toISOString(),
      settings: {
        BENCH_DURATION: DURATION,
        BENCH_CONNECTIONS: CONNECTIONS,
        BENCH_WARMUP: WARMUP,
        BENCH_SCALE: SCALE ? 'on' : 'off',
        ...(STATEMENTS ? { BENCH_STATEMENTS: 'on' } : {}),
        ...(ONLY.length ? { BENCH_ONLY: ONLY } : {}),
        BENCH_MAX_OPEN_RATE: MAX_OPEN_RATE,
        BENCH_MAX_PURCHASE_RATE: MAX_PURCHASE_RATE,
        ...(process.env.BENCH_NODE_ARGS ? { BENCH_NODE_ARGS: process.env.BENCH_NODE_ARGS } : {}),
        cores: os.cpus().length,
      },
      notes,
      rows,
      scale: compareScale(rows),
    };
    writeReport(report, log);
    log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (err) {
    for (const x of procs) if (x.tail().trim() && !x.unexpectedExit) console.error(`[bench] last output of ${x.label}:\n${x.tail().slice(-1500)}`);
    throw err;
  } finally {
    await cleanup();
  }
}

/**
 * Waits (at most 15 s) until no query of the bench database is running, so the work a previous
 * measurement left in flight (requests autocannon stopped waiting for) does not load the next one.
 */
async function settle(monitor: pg.Client): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const r = await monitor.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
    );
    if (r.rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Deletes every JetStream stream of this run's prefix (the grants stream, the floor's); their consumers go with them. */
async function deleteStreams(natsUrl: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    const names: string[] = [];
    for await (const s of jsm.streams.list()) if (s.config.name.startsWith(`${prefix}_`)) names.push(s.config.name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`[bench] failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

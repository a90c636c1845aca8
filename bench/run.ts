/**
 * `npm run bench`: starts the stack as separate processes (as `npm start` does) on a throwaway
 * database, NATS prefix and Redis prefix, next to the floor processes; creates its own app with
 * the bench content (bench/content.ts); prepares players, chests and collections through the API;
 * then measures every scenario (bench/scenarios.ts) and every floor at each connection count, and
 * a scale-out phase with a second replica of chests and of collections. Each row is reported as a
 * ratio to its own floor; the tables are printed and saved under bench/results/. Everything it
 * created is removed at the end, on failure and on Ctrl-C too. How to run it: docs/performance.md.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createTestDatabase, testInfra } from '@ccs/shared/testing';
import { writeBenchContent } from './content.js';
import { Api, createApp, Fixtures } from './fixtures.js';
import { compareScale, writeReport, type Report, type Row } from './report.js';
import { cpuMeter, Rounds } from './rounds.js';
import { FLOORS, SCENARIOS, type FloorKind, type Plan, type Prepared, type Scenario } from './scenarios.js';
import { SagaDrain } from './drain.js';
import { BenchSession } from './session.js';
import { startStack, type Stack } from './stack.js';
import { startStatementsCluster, StatementMeter } from './statements.js';

const log = (s: string) => console.log(`[bench] ${s}`);

/** A bad setting stops the bench at once with one line naming it. */
function badSetting(message: string): never {
  console.error(`[bench] ${message}; see docs/performance.md`);
  process.exit(2);
}

const USAGE = `npm run bench: measures the stack against its floors (docs/performance.md). Settings are environment variables:
  BENCH_ONLY=a,b            only the scenarios (and floors) whose names contain one of these words (saga: the saga floors)
  BENCH_CONNECTIONS=16,50   concurrent connections, one round per count
  BENCH_DURATION=8          seconds measured per round; BENCH_WARMUP=1 seconds of warm-up
  BENCH_SCALE=on|off        the scale-out phase with a second replica of chests and collections
  BENCH_SAGA=on|off         the saga floors the saga scenarios are also compared with (off: the durable floor only)
  BENCH_MAX_OPEN_RATE=1500, BENCH_MAX_PURCHASE_RATE=1500   caps of the write scenarios (requests/s)
  BENCH_LOG_LEVEL=warn      the services' log level
  BENCH_STATEMENTS=1        Postgres per statement: the stack runs on a private cluster with pg_stat_statements
                            (each service its own role); a table per scenario, reset before each measurement
  BENCH_RESULTS_DIR=dir     where the JSON and latest.md go (default bench/results)
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
/** Whether the scenarios' saga floors are measured beside their own floors (named ones always are). */
const SAGA = !['off', '0', 'false', 'no'].includes((process.env.BENCH_SAGA ?? 'on').toLowerCase());
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
/** The floors of the selected scenarios (their saga floors too), the floors named, and the floors those are compared with. */
const floorKinds = (() => {
  const direct = (Object.keys(FLOORS) as FloorKind[]).filter(
    (k) => selected.some((s) => s.floor === k || (SAGA && s.saga === k)) || (ONLY.length > 0 && picked(FLOORS[k].name)),
  );
  return (Object.keys(FLOORS) as FloorKind[]).filter((k) => direct.includes(k) || direct.some((d) => FLOORS[d].versus === k));
})();
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
  const contentFile = path.join(os.tmpdir(), `ccs-bench-content-${id}.json`);
  const session = new BenchSession(infra, `bench${id}`, contentFile, log);
  session.cleanUpOnSignals();
  try {
    if (STATEMENTS) {
      log('BENCH_STATEMENTS: starting a private Postgres cluster with pg_stat_statements ...');
      session.cluster = await startStatementsCluster();
    }
    const db = (session.db = await createTestDatabase(session.cluster ? { ...infra, databaseUrl: session.cluster.url } : infra));
    const stack = await startStack(session, { floorKinds, argon2: ARGON2, started, log });
    const prepared = await prepare(stack, id, contentFile, started);
    const monitor = (session.monitor = new pg.Client({ connectionString: db.url }));
    await monitor.connect();
    const statements = session.cluster ? new StatementMeter(monitor) : undefined;
    await statements?.install();
    const plan = {
      duration: DURATION,
      warmup: WARMUP,
      connections: CONNECTIONS,
      scaleConnections: SCALE_CONNECTIONS,
      floorKinds,
      selected,
      scaled,
      prepared,
    };
    const drain = floorKinds.some((k) => FLOORS[k].drains) ? await SagaDrain.open(infra.natsUrl, session.prefix) : undefined;
    const rounds = new Rounds(session, stack, { monitor, cpu: cpuMeter(session, monitor), statements, drain }, plan, log);
    try {
      await rounds.warmUp();
      for (const c of CONNECTIONS) await rounds.atConnections(c);
      await rounds.scaleOut();
    } finally {
      await drain?.close();
    }
    writeReport(await benchReport(rounds.rows, prepared, stack.env), log);
    log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (err) {
    session.printTails();
    throw err;
  } finally {
    await session.cleanup();
  }
}

/** Creates the bench app and prepares every selected scenario's data through the API. */
async function prepare(stack: Stack, id: string, contentFile: string, started: number): Promise<Map<Scenario, Prepared>> {
  writeBenchContent(contentFile);
  const app = await createApp(stack.env, `bench ${id}`, contentFile, log);
  const api = new Api(stack.base, app.publishableKey);
  const fx = new Fixtures(api, id, log);
  const prepared = new Map<Scenario, Prepared>();
  log(`preparing data through the API for: ${selected.map((s) => s.name).join(', ') || 'floors only'}`);
  for (const s of selected) {
    const t = Date.now();
    const ready = await s.prepare({ api, fx, plan: PLAN, pki: stack.pki });
    // Consuming scenarios: enough for the warm-up and the first run now, topped up before the others.
    await ready.load.topUp?.(WARMUP + DURATION);
    prepared.set(s, ready);
    log(`prepared "${s.name}" (${Math.round((Date.now() - t) / 100) / 10} s)`);
  }
  log(`prepared in ${Math.round((Date.now() - started) / 1000)} s since the start`);
  return prepared;
}

/** The report: the settings, the notes (each scenario's own, the floors', the stack's) and the rows. */
async function benchReport(rows: Row[], prepared: Map<Scenario, Prepared>, env: Record<string, string>): Promise<Report> {
  const notes: string[] = [];
  for (const s of selected) {
    const note = await prepared.get(s)!.describe?.();
    if (note) notes.push(`${s.name}: ${note}.`);
  }
  for (const k of floorKinds) notes.push(`${FLOORS[k].name}: ${FLOORS[k].what}.`);
  if (floorKinds.length)
    notes.push(
      'Floors: the HTTP route (bench/floor-server.ts) and the responders (bench/floor-responder.ts) run in two processes, as the gateway and a service do, with the same packages and connection options; the saga floors\' consumers (bench/floor-consumer.ts) in two more ("saga items", "saga experience").',
    );
  notes.push(`Load generator: autocannon in the bench process, on the same machine (its CPU is the "bench" column).`);
  notes.push(
    `Stack: each service a separate process started as npm start does (node --import tsx --conditions=development), RATE_LIMIT=off, LOG_LEVEL=${env.LOG_LEVEL}, PG_POOL_MAX 10; the bench app's content is the default content with inventory_capacity 2000 and two bench chest types (bench/content.ts).`,
  );
  return {
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
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`[bench] failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

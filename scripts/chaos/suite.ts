/**
 * The chaos suite (`npm run chaos`, test/chaos/chaos.test.ts): starts a private Postgres cluster
 * and a private nats-server (both may be killed and restarted), and the stack's services one by
 * one as processes on them, with a key prefix on the machine's Redis; runs the scenarios in
 * order; checks each one's ground truth in SQL; removes everything it made, whatever happens.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { judge, summary, type ScenarioResult } from './report.js';
import { creditPurchaseRace } from './scenarios/credit-purchase-race.js';
import { killService } from './scenarios/kill-service.js';
import { natsDownLong, natsRestartQuick } from './scenarios/nats-restart.js';
import { postgresDownLong, postgresRestart } from './scenarios/postgres-restart.js';
import { registrationBurst } from './scenarios/registration-burst.js';
import { sameChestRace } from './scenarios/same-chest-race.js';
import { tradesUnderKills } from './scenarios/trades.js';
import { Api, type Listed } from './support/client.js';
import { Progress } from './support/progress.js';
import { email, type ChaosContext, type Scenario } from './support/context.js';
import { checkRedis, natsServerUnavailable, SetupError, sleep, startChaosPostgres, startPrivateNats } from './support/infra.js';
import { ChaosRunState } from './support/run-state.js';
import { chooseRuntime, ChaosStack, distUnusable, SERVICES, type Runtime } from './support/stack.js';

/** Every scenario, in the order they run. */
export const SCENARIOS: Scenario[] = [
  sameChestRace,
  creditPurchaseRace,
  registrationBurst,
  ...SERVICES.map(killService),
  tradesUnderKills,
  natsRestartQuick,
  postgresRestart,
  natsDownLong,
  postgresDownLong,
];

export interface ChaosOptions {
  /** Smaller bursts, only the scenarios marked short (CI). */
  short: boolean;
  /** Name parts: only scenarios whose name contains one of them (case-insensitive). */
  only?: string[];
  /**
   * A scenario that makes no progress (no answer to the run's client, no step logged) for this
   * many seconds fails as stalled, and the rest are not run; default 90. There is no bound on the
   * run's wall time: a busy machine makes it slower, never a failure.
   */
  stallS?: number;
  /**
   * The services compiled (dist, as the Docker image runs them) or from their TypeScript sources
   * (tsx, as npm start runs them); auto (the default): dist when it is newer than every source.
   */
  runtime?: Runtime | 'auto';
  log?: (line: string) => void;
}

export interface ChaosRun {
  results: ScenarioResult[];
  held: number;
  total: number;
  seconds: number;
  summary: string;
  /** The services' logs, kept when something did not hold. */
  logFile?: string;
}

export function selectScenarios(opts: Pick<ChaosOptions, 'short' | 'only'>): Scenario[] {
  const only = (opts.only ?? []).map((o) => o.trim().toLowerCase()).filter(Boolean);
  return SCENARIOS.filter((s) => (!opts.short || s.short) && (!only.length || only.some((o) => s.name.toLowerCase().includes(o))));
}

let activeCleanup: (() => Promise<void>) | undefined;
/** Removes what the running suite made (for a signal handler); undefined when none runs. */
export const cleanupActiveRun = () => activeCleanup?.();

/** Seconds without progress after which a scenario counts as stalled (ChaosOptions.stallS). */
export const DEFAULT_STALL_S = 90;

export async function runChaos(opts: ChaosOptions): Promise<ChaosRun> {
  const progress = new Progress();
  const print = opts.log ?? ((line: string) => console.log(`[chaos] ${line}`));
  const log = (line: string) => {
    progress.mark(line);
    print(line);
  };
  const selected = selectScenarios(opts);
  if (!selected.length)
    throw new Error(`CHAOS_ONLY="${opts.only?.join(',')}" matches no scenario; scenarios: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const started = Date.now();
  const stallMs = (opts.stallS ?? DEFAULT_STALL_S) * 1000;
  const id = randomBytes(3).toString('hex');
  const run = new ChaosRunState(`chaos${id}`, process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', log);
  activeCleanup = () => run.cleanup();

  const results: ScenarioResult[] = [];
  try {
    const ctx = await startChaos(run, opts, log, started, progress);
    ctx.api.onAnswer = (a) => progress.mark(`a ${a.kind} request answered ${a.status}`);
    for (const [i, s] of selected.entries()) {
      if ((await runScenario(ctx, s, `[${i + 1}/${selected.length}]`, { progress, stallMs, results })) === 'stop') break;
    }
  } catch (err) {
    run.keepLogs = run.stack !== undefined;
    throw err;
  } finally {
    if (results.some((r) => !r.held) || process.env.CHAOS_KEEP_LOGS === '1') run.keepLogs = true;
    await run.cleanup();
    activeCleanup = undefined;
  }
  const seconds = (Date.now() - started) / 1000;
  const held = results.filter((r) => r.held).length;
  return {
    results,
    held,
    total: results.length,
    seconds,
    summary: summary(results, { short: opts.short, seconds }),
    logFile: run.keepLogs ? run.logFile : undefined,
  };
}

/** The services' environment: the private Postgres and NATS, the run's prefixes, the demo key. */
const stackEnv = (run: ChaosRunState, databaseUrl: string, natsUrl: string, apiKey: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  NATS_URL: natsUrl,
  REDIS_URL: run.redisUrl,
  NATS_PREFIX: run.prefix,
  REDIS_PREFIX: `${run.prefix}:`,
  LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn',
  CHESTS_DEMO_API_KEY: apiKey,
  RATE_LIMIT: 'off',
  ARGON2_MEMORY_KIB: '1024',
  ARGON2_TIME_COST: '1',
  // Interrupted purchases are refunded within seconds, so a run can check them settled.
  PURCHASE_STALE_MS: '5000',
  PURCHASE_SWEEP_INTERVAL_MS: '1000',
  // Likewise trades left mid-step by a killed service, and the refunds they owe.
  TRADE_STUCK_MS: '5000',
  TRADE_SWEEP_INTERVAL_MS: '1000',
  OTEL_SDK_DISABLED: 'true',
});

/** The cheap checks, then the private Postgres and NATS, the services one by one, and the scenarios' context. */
async function startChaos(
  run: ChaosRunState,
  opts: ChaosOptions,
  log: (line: string) => void,
  started: number,
  progress: Progress,
): Promise<ChaosContext> {
  const { prefix } = run;
  const { runtime, why } = chooseRuntime(opts.runtime ?? 'auto');
  log(
    `${opts.short ? 'short' : 'full'} run: ${selectScenarios(opts)
      .map((s) => s.name)
      .join(', ')} (a scenario fails when nothing progresses for ${opts.stallS ?? DEFAULT_STALL_S} s)`,
  );
  if (runtime === 'dist') {
    const stale = distUnusable();
    if (stale)
      throw new SetupError(
        `CHAOS_RUNTIME=dist needs the compiled services: ${stale}; run npm run build first, or leave CHAOS_RUNTIME unset (the sources through tsx)`,
      );
  }
  // The cheap checks first, before anything is started.
  const noNats = natsServerUnavailable();
  if (noNats) throw new SetupError(noNats);
  await checkRedis(run.redisUrl);
  run.redisReached = true;
  const pgStarted = await startChaosPostgres();
  const postgres = (run.postgres = pgStarted.cluster);
  log(`private Postgres cluster on port ${postgres.port} (${postgres.dir})`);
  const nats = (run.nats = await startPrivateNats());
  log(`private nats-server with JetStream on port ${nats.port}`);
  const db = (run.db = new pg.Pool({ connectionString: pgStarted.databaseUrl, max: 4 }));
  db.on('error', () => undefined); // idle connections break when Postgres restarts
  const apiKey = `demo_chaos_${randomBytes(12).toString('hex')}`;
  const stack = (run.stack = await ChaosStack.create(stackEnv(run, pgStarted.databaseUrl, nats.url, apiKey), run.logFile, runtime));
  log(
    `services ${runtime === 'dist' ? 'compiled (dist/, as the Docker image runs them)' : 'from their sources (tsx, as npm start runs them)'}: ${why}`,
  );
  log(`starting the services one by one (NATS prefix ${prefix}, Redis prefix ${prefix}:, logs in ${run.logFile}) ...`);
  await stack.startAll(log, 90_000);
  const api = new Api(stack.base, apiKey);
  const woodenId = await waitForCatalog(api, 60_000);
  const prober = await api.newActor(email('probe'));
  const currencies = await api.must<Listed<{ code: string }>>('GET', '/api/v1/currencies', { token: prober.token });
  api.coinsId = currencies.data.find((c) => c.attributes.code === 'coins')!.id;
  log(`stack ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return { api, db, stack, nats, postgres, prefix, short: opts.short, woodenId, prober, progress, log };
}

/**
 * Runs one scenario, bounded by progress (Progress.bound), and records its result; a crashed
 * service is started again after it. 'stop': it stalled, and the remaining scenarios are not run.
 */
async function runScenario(
  ctx: ChaosContext,
  s: Scenario,
  at: string,
  o: { progress: Progress; stallMs: number; results: ScenarioResult[] },
): Promise<'stop' | 'next'> {
  const { stack, log } = ctx;
  log(`${at} ${s.name} ...`);
  const t = Date.now();
  const crashesBefore = stack.crashes.length;
  try {
    const report = await o.progress.bound(s.run(ctx), o.stallMs);
    const why = judge(report, stack.crashes.slice(crashesBefore));
    o.results.push({ name: s.name, short: s.short, seconds: (Date.now() - t) / 1000, report, held: why.length === 0, why });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    o.results.push({ name: s.name, short: s.short, seconds: (Date.now() - t) / 1000, held: false, why: [message.split('\n')[0]!], error: message });
    if (message.startsWith('stalled')) {
      log(`${s.name} ${message}; the remaining scenarios are not run`);
      return 'stop';
    }
  }
  const r = o.results.at(-1)!;
  log(`${s.name}: ${r.held ? 'held' : `NOT held (${r.why.join('; ')})`} in ${r.seconds.toFixed(0)} s`);
  await healStack(stack, log);
  return 'next';
}

/** Waits until the catalog lists the Wooden Chest (the demo content has reached chests); its id. */
async function waitForCatalog(api: Api, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await api.must<Listed<{ name: string }>>('GET', '/api/v1/chests?page[limit]=100');
    const wooden = body.data.find((c) => c.attributes.name === 'Wooden Chest');
    if (wooden) return wooden.id;
    if (Date.now() > deadline) throw new Error(`the catalog has no Wooden Chest after ${timeoutMs / 1000} s: the demo content did not reach chests`);
    await sleep(250);
  }
}

/** Before the next scenario: every service running (a crashed one started again) and ready. */
async function healStack(stack: ChaosStack, log: (line: string) => void): Promise<void> {
  for (const s of SERVICES) {
    if (!stack.alive(s)) {
      log(`${s} is not running: starting it again for the next scenarios`);
      stack.start(s);
    }
  }
  for (const s of SERVICES) await stack.waitReady(s, 60_000);
}

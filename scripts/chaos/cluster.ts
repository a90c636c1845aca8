/**
 * `npm run chaos -- --cluster`: the fault suite on the production topology (docs/deploy.md, "The
 * production topology on one machine"). A private Postgres cluster (initdb, a free port) with the
 * cluster on it (scripts/cluster/cluster.ts: three NATS servers, PgBouncer in transaction mode,
 * two replicas of every service); then, each during a burst of openings and credits (the drill,
 * scripts/cluster/drill/), one replica of each backend service killed in turn, gateway-2 killed,
 * the grants stream's leader killed, another NATS server killed, Postgres restarted behind
 * PgBouncer (fast, then immediate), PgBouncer killed, and a rolling restart of every service.
 * Per scenario a line, at the end the table and "N of M held". test/cluster is its short version.
 */
import { createWriteStream, existsSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivatePostgres, type PrivatePostgres } from '@ccs/shared/testing';
import { startCluster, type Cluster } from '../cluster/cluster.js';
import { Drill } from '../cluster/drill/index.js';
import {
  gatewayKilled,
  grantsLeaderKilled,
  natsServerKilled,
  pgbouncerKilled,
  postgresRestarted,
  replicaKilled,
  rollingRestart,
} from '../cluster/drill/faults.js';
import { primaryKilled, switchover, syncStandbyKilled } from '../cluster/drill/patroni-faults.js';
import { healAll, natsServerPartitioned, primaryPartitioned, replicaPartitioned } from '../cluster/drill/partition-faults.js';
import { ClusterNet } from '../cluster/netns/cluster-net.js';
import { netnsUnavailable } from '../cluster/netns/lab.js';
import { NATS_SERVER } from '../cluster/nats-cluster.js';
import { patroniUnavailable } from '../cluster/patroni.js';
import { PGBOUNCER } from '../cluster/postgres.js';
import { checkRedis, SetupError } from './support/infra.js';

interface ClusterScenario {
  name: string;
  /** Bound on its run (s): past it the run stops (what a scenario left running could disturb the next). */
  boundS: number;
  run(d: Drill, postgres: PrivatePostgres | undefined): Promise<unknown>;
}

/**
 * CLUSTER_PARTITIONS=1: the partition drills (scripts/cluster/drill/partition-faults.ts), on
 * Patroni, with the Patroni nodes, the NATS servers and chests-2 in network namespaces.
 */
export const onPartitions = () => process.env.CLUSTER_PARTITIONS === '1';
/** CLUSTER_POSTGRES=patroni: the cluster's own Postgres nodes under Patroni, and their scenarios. */
export const onPatroni = () => process.env.CLUSTER_POSTGRES === 'patroni' || onPartitions();

/** How long PgBouncer stays killed (as long as a Postgres restart takes). */
const PGBOUNCER_DOWN_MS = 1000;

/** Every scenario, in the order they run (names as the drill records them). */
export const CLUSTER_SCENARIOS: ClusterScenario[] = [
  ...['players-2', 'wallet-2', 'chests-2', 'collections-2', 'egress-2', 'store-2'].map((r) => ({
    name: `${r} killed`,
    boundS: 150,
    run: (d: Drill) => replicaKilled(d, r),
  })),
  { name: 'gateway-2 killed', boundS: 150, run: (d) => gatewayKilled(d, 'gateway-2') },
  { name: 'grants leader NATS server killed', boundS: 150, run: (d) => grantsLeaderKilled(d) },
  { name: 'non-leader NATS server killed', boundS: 150, run: (d) => natsServerKilled(d) },
  { name: 'Postgres restarted (-m fast) behind PgBouncer', boundS: 150, run: (d, pg) => postgresRestarted(d, pg!, 'fast') },
  { name: 'Postgres restarted (-m immediate) behind PgBouncer', boundS: 150, run: (d, pg) => postgresRestarted(d, pg!, 'immediate') },
  { name: `PgBouncer killed, back after ${PGBOUNCER_DOWN_MS / 1000} s`, boundS: 150, run: (d) => pgbouncerKilled(d, PGBOUNCER_DOWN_MS) },
  { name: 'rolling restart of all seven services', boundS: 300, run: (d) => rollingRestart(d) },
];

/** On Patroni (CLUSTER_POSTGRES=patroni): Postgres' own faults, each under the history drill. */
export const PATRONI_SCENARIOS: ClusterScenario[] = [
  { name: 'planned switchover (PgBouncer paused)', boundS: 300, run: (d) => switchover(d) },
  { name: 'Postgres primary killed (-9, Patroni fails over)', boundS: 400, run: (d) => primaryKilled(d) },
  { name: 'synchronous standby killed (-9)', boundS: 300, run: (d) => syncStandbyKilled(d) },
];

/** With CLUSTER_PARTITIONS=1: hosts cut off in their namespaces, each under the history drill. */
export const PARTITION_SCENARIOS: ClusterScenario[] = [
  { name: 'Postgres primary partitioned from etcd and its standbys', boundS: 400, run: (d) => primaryPartitioned(d) },
  { name: 'grants leader NATS server partitioned from its peers', boundS: 300, run: (d) => natsServerPartitioned(d) },
  { name: 'chests-2 partitioned from NATS', boundS: 300, run: (d) => replicaPartitioned(d, 'chests-2') },
];

export const clusterScenarios = () => (onPartitions() ? PARTITION_SCENARIOS : onPatroni() ? PATRONI_SCENARIOS : CLUSTER_SCENARIOS);

export function selectClusterScenarios(only: string[]): ClusterScenario[] {
  const parts = only.map((o) => o.trim().toLowerCase()).filter(Boolean);
  return clusterScenarios().filter((s) => !parts.length || parts.some((o) => s.name.toLowerCase().includes(o)));
}

/** What one run made, and its removal (once, whatever happens). */
class ClusterRun {
  postgres?: PrivatePostgres;
  /** The network namespaces of the partition drills (removed after the cluster stopped). */
  net?: ClusterNet;
  /** The cluster while it starts: a signal then waits for it, to stop what it started. */
  starting?: Promise<Cluster>;
  cluster?: Cluster;
  drill?: Drill;
  keepLogs = false;
  readonly logDir = mkdtempSync(join(tmpdir(), 'ccs-chaos-cluster-'));
  readonly logFile = join(this.logDir, 'cluster.log');
  readonly out: WriteStream = createWriteStream(this.logFile);
  private cleaning?: Promise<void>;

  constructor(private readonly log: (line: string) => void) {}

  cleanup(): Promise<void> {
    return (this.cleaning ??= (async () => {
      this.log('cleaning up: stopping the cluster (gateways, services, PgBouncer, NATS), removing the private Postgres ...');
      await this.drill?.close();
      if (!this.cluster && this.starting) this.log('waiting for the cluster to finish starting, to stop what it started ...');
      const cluster = this.cluster ?? (await this.starting?.catch(() => undefined));
      await cluster?.stop().catch((err) => this.log(`could not stop the cluster: ${String(err)}`));
      await this.postgres?.destroy().catch((err) => this.log(`could not remove the private Postgres: ${String(err)}`));
      await this.net?.destroy().catch((err) => this.log(`could not remove the network namespaces: ${String(err)}`));
      await new Promise((r) => this.out.end(r));
      if (this.keepLogs) this.log(`the cluster's logs are kept in ${this.logFile}`);
      else rmSync(this.logDir, { recursive: true, force: true });
    })());
  }
}

let active: ClusterRun | undefined;
/** Removes what the running cluster suite made (for a signal handler). */
export const cleanupClusterRun = () => active?.cleanup();

/** The private Postgres, the cluster on it, the drill's player and catalog. */
async function setUp(run: ClusterRun, log: (line: string) => void): Promise<Drill> {
  for (const [what, bin] of [
    ['nats-server', NATS_SERVER],
    ['pgbouncer', PGBOUNCER],
  ])
    if (!existsSync(bin!))
      throw new SetupError(`no ${what} at ${bin}: apt-get install nats-server pgbouncer (or set NATS_SERVER_BIN / PGBOUNCER_BIN)`);
  await checkRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const patroni = onPatroni();
  const missing = (patroni ? patroniUnavailable() : undefined) ?? (onPartitions() ? netnsUnavailable() : undefined);
  if (missing) throw new SetupError(missing);
  if (onPartitions()) {
    const net = (run.net = ClusterNet.create());
    log(
      `network namespaces on ${net.lab.subnet}.0/24: ${[...net.lab.hosts.values()].map((h) => `${h.name} ${h.address}`).join(', ')}; etcd at ${net.etcdHost}`,
    );
  }
  if (!patroni) {
    const postgres = (run.postgres = await startPrivatePostgres({ settings: { max_connections: '200' } }));
    log(`private Postgres cluster on port ${postgres.port} (${postgres.dir})`);
  }
  run.starting = startCluster({
    databaseUrl: run.postgres?.url,
    postgres: patroni ? 'patroni' : 'single',
    net: run.net,
    logLevel: process.env.CHAOS_LOG_LEVEL || 'warn',
    // The burst is one app's traffic from one address; cheap password hashing for the registrations.
    env: { RATE_LIMIT: 'off', ARGON2_MEMORY_KIB: '1024', ARGON2_TIME_COST: '1', OTEL_SDK_DISABLED: 'true' },
    say: (line) => log(`cluster: ${line}`),
    print: (line) => run.out.write(`${line}\n`),
  });
  const cluster = (run.cluster = await run.starting);
  const drill = (run.drill = new Drill(cluster, log));
  const { player, opened } = await drill.client.openStarterChest();
  await drill.client.must('opening the starter chest', Promise.resolve(opened));
  await drill.client.discover(player);
  log(`a player registered and opened its starter chest through ${cluster.gatewayUrls.join(' and ')}; logs in ${run.logFile}`);
  return drill;
}

/** Before the next scenario: every child running (one that died is started again) and ready. */
async function heal(cluster: Cluster, log: (line: string) => void): Promise<void> {
  if (cluster.net) healAll(cluster.net);
  for (const name of cluster.names()) {
    if (cluster.running(name)) continue;
    log(`${name} is not running: starting it again for the next scenarios`);
    cluster.restart(name);
  }
  for (const name of cluster.names()) await cluster.ready(name);
}

/** Runs one scenario within its bound; false when it overran it (the rest are not run). */
async function runOne(
  drill: Drill,
  postgres: PrivatePostgres | undefined,
  s: ClusterScenario,
  at: string,
  log: (line: string) => void,
): Promise<boolean> {
  log(`${at} ${s.name} ...`);
  const exitsBefore = drill.cluster.unexpectedExits.length;
  const t = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      s.run(drill, postgres),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`did not finish within ${s.boundS} s`)), s.boundS * 1000))),
    ]);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    drill.failed(s.name, message.split('\n')[0]!, exitsBefore);
    if (message.startsWith('did not finish')) return false;
  } finally {
    clearTimeout(timer);
  }
  log(`${at} ${s.name}: done in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  await heal(drill.cluster, log);
  return true;
}

export interface ClusterChaosRun {
  held: number;
  total: number;
  seconds: number;
  logFile?: string;
}

export async function runClusterChaos(opts: { only: string[]; timeoutS: number; log: (line: string) => void }): Promise<ClusterChaosRun> {
  const { log } = opts;
  const selected = selectClusterScenarios(opts.only);
  const started = Date.now();
  const deadline = started + opts.timeoutS * 1000;
  const run = (active = new ClusterRun(log));
  log(`cluster run: ${selected.map((s) => s.name).join(', ')} (bound ${opts.timeoutS} s)`);
  try {
    const drill = await setUp(run, log);
    log(`cluster ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    for (const [i, s] of selected.entries()) {
      const at = `[${i + 1}/${selected.length}]`;
      // Keep room for the final accounting (up to 90 s of grants) and the cleanup.
      if (deadline - Date.now() - 60_000 < s.boundS * 1000) drill.failed(s.name, 'not run: the time bound ran out (raise CHAOS_TIMEOUT_S)');
      else if (!(await runOne(drill, run.postgres, s, at, log))) {
        for (const rest of selected.slice(i + 1)) drill.failed(rest.name, 'not run: an earlier scenario overran its bound');
        break;
      }
    }
    const a = await drill.account();
    run.keepLogs = a.held < a.total || process.env.CHAOS_KEEP_LOGS === '1';
    return { held: a.held, total: a.total, seconds: (Date.now() - started) / 1000, logFile: run.keepLogs ? run.logFile : undefined };
  } catch (err) {
    run.keepLogs = true;
    throw err;
  } finally {
    await run.cleanup();
    active = undefined;
  }
}

/**
 * `npm run chaos`: the fault suite (scripts/chaos/suite.ts). Settings by environment:
 * CHAOS_SHORT=1 (smaller bursts, the scenarios CI runs), CHAOS_ONLY (comma list of name parts,
 * e.g. "kill,nats"), CHAOS_STALL_S (a scenario during which nothing progresses for this many
 * seconds fails as stalled; 90; the run has no bound on its wall time),
 * CHAOS_RUNTIME (dist: the services compiled by npm run build, as the Docker image runs them;
 * tsx: from their sources, as npm start runs them; auto, the default: dist when it is newer than
 * every source, else tsx), CHAOS_LOG_LEVEL (the services' log
 * level, default warn), CHAOS_KEEP_LOGS=1 (keep their logs even when everything held). Exit code 0 only when every scenario
 * held; 1 otherwise; 2 for a bad setting.
 *
 * `npm run chaos -- --cluster`: the same on the production topology (scripts/chaos/cluster.ts: a
 * private Postgres, three NATS servers, PgBouncer, two replicas of every service; replicas,
 * gateway, NATS servers, Postgres and PgBouncer killed or restarted during bursts, and a rolling
 * restart); CHAOS_ONLY, CHAOS_TIMEOUT_S (default 900 s), CHAOS_LOG_LEVEL and CHAOS_KEEP_LOGS apply,
 * CHAOS_SHORT and CHAOS_RUNTIME do not (the replicas run from their sources; test/cluster is its
 * short version). With CLUSTER_POSTGRES=patroni the cluster runs on its own Postgres nodes under
 * Patroni (etcd, HAProxy; scripts/cluster/patroni.ts) and the scenarios are Postgres' own faults
 * under the history drill (a planned switchover, the primary killed, the synchronous standby
 * killed; scripts/cluster/drill/history.ts). With CLUSTER_PARTITIONS=1 (root) the Patroni nodes,
 * the NATS servers and chests-2 run in network namespaces and the scenarios cut them off instead
 * (scripts/cluster/drill/partition-faults.ts).
 * `npm run chaos -- --help` prints this.
 */
import { cleanupClusterRun, clusterScenarios, runClusterChaos } from './cluster.js';
import { cleanupActiveRun, DEFAULT_STALL_S, runChaos, SCENARIOS } from './suite.js';
import { SetupError } from './support/infra.js';

const USAGE = `npm run chaos [-- --cluster]
  (no flag)   the single-node fault suite: a private Postgres and nats-server, one process per service
  --cluster   the production topology: a private Postgres behind PgBouncer, three NATS servers, two
              replicas of every service; replicas, a gateway, NATS servers, Postgres and PgBouncer
              killed or restarted during bursts, and a rolling restart (docs/deploy.md)
              CLUSTER_POSTGRES=patroni: on three Postgres nodes under Patroni (etcd, HAProxy); a switchover,
              the primary killed and the synchronous standby killed, each under a load of keyed writes
              checked by the history checker
              CLUSTER_PARTITIONS=1 (root, on Patroni): hosts in network namespaces cut off instead: the
              primary from etcd and its standbys, the grants leader NATS server from its peers,
              chests-2 from NATS (docs/deploy.md, "Partitions")
settings: CHAOS_ONLY="<name part>,…"  CHAOS_LOG_LEVEL  CHAOS_KEEP_LOGS=1
          single-node only: CHAOS_SHORT=1, CHAOS_RUNTIME=auto|dist|tsx, CHAOS_STALL_S (no progress for this long fails a scenario; 90)
          cluster only: CHAOS_TIMEOUT_S (the whole run's bound; 900 s)
exit code: 0 every scenario held, 1 not, 2 a bad setting`;

const log = (line: string) => console.log(`[chaos] ${line}`);

function bad(message: string): never {
  console.error(`[chaos] ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const strange = args.filter((a) => a !== '--cluster');
if (strange.length) bad(`unknown argument ${strange.join(' ')}\n${USAGE}`);
const cluster = args.includes('--cluster');
const scenarioNames = (cluster ? clusterScenarios() : SCENARIOS).map((s) => s.name);
const cleanup = () => (cluster ? cleanupClusterRun() : cleanupActiveRun());

const short = ['1', 'true', 'yes', 'on'].includes((process.env.CHAOS_SHORT ?? '').toLowerCase());
const only = (process.env.CHAOS_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const rawTimeout = process.env.CHAOS_TIMEOUT_S;
const timeoutS = rawTimeout ? Number(rawTimeout) : 900;
if (!Number.isFinite(timeoutS) || timeoutS < 60) bad(`CHAOS_TIMEOUT_S must be a number of seconds, at least 60, not "${rawTimeout}"`);
const rawStall = process.env.CHAOS_STALL_S;
const stallS = rawStall ? Number(rawStall) : DEFAULT_STALL_S;
if (!Number.isFinite(stallS) || stallS < 10) bad(`CHAOS_STALL_S must be a number of seconds, at least 10, not "${rawStall}"`);
const runtime = (process.env.CHAOS_RUNTIME || 'auto').toLowerCase();
if (runtime !== 'tsx' && runtime !== 'dist' && runtime !== 'auto') bad(`CHAOS_RUNTIME must be auto, dist or tsx, not "${process.env.CHAOS_RUNTIME}"`);
const unknown = only.filter((o) => !scenarioNames.some((n) => n.toLowerCase().includes(o.toLowerCase())));
if (unknown.length) bad(`CHAOS_ONLY names no scenario: ${unknown.join(', ')}; scenarios: ${scenarioNames.join(', ')}`);

// The cluster run's hard bound: past it (and a minute for cleaning up), whatever still runs is
// stopped. The single-node run is bounded by progress instead (CHAOS_STALL_S).
if (cluster) {
  const hardStop = setTimeout(
    () => {
      console.error(`[chaos] the run passed its bound of ${timeoutS} s; cleaning up and exiting (raise CHAOS_TIMEOUT_S)`);
      void Promise.race([cleanup(), new Promise((r) => setTimeout(r, 30_000))]).finally(() => process.exit(1));
    },
    (timeoutS + 60) * 1000,
  );
  hardStop.unref();
}

let firstSignal = 0;
const onSignal = (signal: NodeJS.Signals) => {
  // npm and tsx relay Ctrl-C too: only a second one well after the first skips the cleanup.
  if (firstSignal) {
    if (Date.now() - firstSignal < 2000) return;
    console.error(
      `[chaos] ${signal} again: exiting without finishing the cleanup (a private Postgres and nats-server stop with this process; Redis keys chaos*: may remain)`,
    );
    process.exit(130);
  }
  firstSignal = Date.now();
  log(`${signal}: cleaning up before exiting (Ctrl-C again to skip)`);
  void Promise.resolve(cleanup()).finally(() => process.exit(130));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const failed = (err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`[chaos] failed: ${message}`);
  if (!(err instanceof SetupError))
    console.error("[chaos] the stack could not be set up or run; the services' last output is above or in the log named earlier");
  process.exit(1);
};

if (cluster) {
  runClusterChaos({ only, timeoutS, log }).then((run) => {
    log(`${run.held} of ${run.total} held (cluster run, ${Math.round(run.seconds)} s)`);
    if (run.held < run.total)
      console.log(
        `\nNot every scenario held: read the lines above${run.logFile ? ` and the cluster's logs in ${run.logFile}` : ''}; run one alone with CHAOS_ONLY="<name part>".`,
      );
    process.exit(run.held === run.total ? 0 : 1);
  }, failed);
} else
  runChaos({ short, only, stallS, log, runtime }).then((run) => {
    console.log(`\n${run.summary}`);
    if (run.held < run.total) {
      console.log(
        `\nNot every scenario held: read the reasons above${run.logFile ? ` and the services' logs in ${run.logFile}` : ''}; run one alone with CHAOS_ONLY="<name part>".`,
      );
    }
    process.exit(run.held === run.total ? 0 : 1);
  }, failed);

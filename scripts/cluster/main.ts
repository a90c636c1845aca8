/**
 * `npm run stack:cluster`: the production topology on one machine (docs/deploy.md, "The
 * production topology on one machine"). Settings: DATABASE_URL (the Postgres to use; a fresh
 * database is made in it and dropped at the end, unless CLUSTER_USE_DATABASE=1 uses its own
 * database), REDIS_URL, CLUSTER_PORTS (the gateways' ports, default 3100,3101), CLUSTER_REPLICAS
 * (2), LOG_LEVEL (the services', default warn), CHESTS_DEMO_API_KEY (else a random key),
 * CLUSTER_POSTGRES=patroni or `-- --postgres patroni` (the cluster's own Postgres with failover:
 * etcd, Patroni, HAProxy; scripts/cluster/patroni.ts). Ctrl-C stops everything and removes the
 * temporary files.
 */
import { checkPorts } from '../start/preflight.js';
import { startCluster, type Cluster } from './cluster.js';

const env = process.env;
const say = (line: string) => console.log(`cluster      | ${line}`);
const ports = (env.CLUSTER_PORTS || '3100,3101').split(',').map((p) => Number(p.trim()));
const replicas = Number(env.CLUSTER_REPLICAS || 2);
const args = process.argv.slice(2);
const postgresArg = args.includes('--postgres') ? args[args.indexOf('--postgres') + 1] : undefined;
const postgres = postgresArg ?? (env.CLUSTER_POSTGRES || 'single');

function bad(message: string): never {
  console.error(`cluster      | ${message}`);
  process.exit(2);
}

if (postgres !== 'single' && postgres !== 'patroni') bad(`--postgres (CLUSTER_POSTGRES) must be single or patroni, not "${postgres}"`);
if (args.some((a, i) => a !== '--postgres' && args[i - 1] !== '--postgres'))
  bad(`unknown argument in ${args.join(' ')}; known: --postgres single|patroni`);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) bad(`CLUSTER_REPLICAS must be 1 to 5, not "${env.CLUSTER_REPLICAS}"`);
if (ports.length < replicas || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535))
  bad(`CLUSTER_PORTS must list ${replicas} ports, comma separated (one per gateway), not "${env.CLUSTER_PORTS}"`);

let cluster: Cluster | undefined;
let stopping: Promise<void> | undefined;
let firstSignal = 0;

function shutdown(code: number): Promise<void> {
  stopping ??= (async () => {
    say('stopping: gateways, services, PgBouncer, NATS (and Patroni, etcd, HAProxy when on Patroni); then removing the temporary files');
    await cluster?.stop();
    say('stopped');
    process.exit(code);
  })();
  return stopping;
}

function onSignal(signal: NodeJS.Signals): void {
  if (stopping) {
    // Ctrl-C arrives twice at once (the terminal and npm/tsx); a later second one is impatience.
    if (Date.now() - firstSignal < 1500) return;
    say(`${signal} again: exiting without cleaning up (the children get SIGKILL with this process group)`);
    process.exit(130);
  }
  firstSignal = Date.now();
  say(`${signal} received`);
  void shutdown(0);
}

async function main(): Promise<void> {
  const taken = await checkPorts(ports.slice(0, replicas).map((port) => ({ name: 'CLUSTER_PORTS', port })));
  if (taken.length) bad(taken.join('\n'));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = Date.now();
  try {
    cluster = await startCluster({
      databaseUrl: env.DATABASE_URL,
      postgres: postgres as 'single' | 'patroni',
      useExistingDatabase: env.CLUSTER_USE_DATABASE === '1',
      redisUrl: env.REDIS_URL,
      replicas,
      gatewayPorts: ports,
      apiKey: env.CHESTS_DEMO_API_KEY || undefined,
      logLevel: env.LOG_LEVEL || 'warn',
      say,
      print: (line) => console.log(line),
    });
  } catch (err) {
    if (stopping) return;
    say(`could not start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  if (stopping) return;
  const c = cluster;
  const leader = await c.grantsLeader().catch(() => '?');
  say(
    `NATS: ${c.natsNodes.map((n) => `${n.name} 127.0.0.1:${n.port} pid ${c.pid(n.name)}${n.name === leader ? ' (grants leader)' : ''}`).join(', ')}`,
  );
  say(`Postgres through PgBouncer: 127.0.0.1:${c.pgbouncerPort} (pid ${c.pid('pgbouncer')}), database ${c.database}`);
  if (c.patroni) {
    const p = c.patroni;
    say(
      `Patroni: primary ${await p.primary()}; ${p.nodes.map((n) => `${n.name} Postgres 127.0.0.1:${n.pgPort} REST API ${n.apiPort}`).join(', ')}; HAProxy 127.0.0.1:${p.port}`,
    );
    say(`Patroni: patronictl -c ${p.nodes[0]!.configFile} list (switchover: … switchover --candidate pg2 --force)`);
  }
  const replicaPids = c
    .names()
    .filter((n) => /-\d+$/.test(n))
    .map((n) => `${n} ${c.pid(n)}`);
  say(`replicas (name pid): ${replicaPids.join(', ')}`);
  say(`kill one by hand: kill -9 <pid> (e.g. kill -9 ${c.pid('chests-2')} for chests-2); files in ${c.dir}`);
  say(`studio console secret key: ${c.secretKey}`);
  say(`ready in ${Math.round((Date.now() - started) / 1000)} s: gateways ${c.gatewayUrls.join(' ')}; demo API key: ${c.apiKey}`);
}

void main();

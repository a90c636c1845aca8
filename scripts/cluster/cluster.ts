/**
 * The production topology on one machine (`npm run stack:cluster`, docs/deploy.md): three
 * nats-server processes in one JetStream cluster, PgBouncer in transaction mode in front of
 * Postgres with one role per service, and two replicas of every service, all as child processes
 * of this one, with their files in one temporary directory. `startCluster` returns when every
 * replica answers; `stop` ends everything and removes what it made.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, RequestStrategy } from 'nats';
import { grantsLeaderOf, readyOf, replaceChild, waitForGrantsLeaderOf, type Replaced } from './control.js';
import { startServiceProcess, type ServiceName } from '../start/service-process.js';
import { natsUrlOf, planNatsCluster, startNatsNode, waitForMetaLeader, type NatsNode } from './nats-cluster.js';
import {
  dropDatabase,
  prepareDatabase,
  SCHEMA_OWNERS,
  spawnPgbouncer,
  startPgbouncer,
  type Bouncer,
  type ClusterDatabase,
  type SchemaOwner,
} from './postgres.js';
import type { ClusterNet } from './netns/cluster-net.js';
import { startPatroni, type PatroniCluster } from './patroni.js';
import { freePorts, track, waitFor, type Ended } from './processes.js';
import { commonEnv, serviceEnv } from './settings.js';
import { clearRedis, Supervisor } from './supervisor.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ClusterOptions {
  /** Postgres to use (the database in it is used only with `useExistingDatabase`). */
  databaseUrl?: string;
  /**
   * `patroni`: the cluster's own Postgres with failover (scripts/cluster/patroni.ts: three etcd
   * members, three Postgres nodes under Patroni, HAProxy to the primary; PgBouncer points at
   * HAProxy), instead of `databaseUrl`'s.
   */
  postgres?: 'single' | 'patroni';
  /** Use DATABASE_URL's database instead of a fresh one (which is dropped on stop). */
  useExistingDatabase?: boolean;
  redisUrl?: string;
  /** Replicas of each service (2). */
  replicas?: number;
  /** The gateways' ports, one per gateway replica (free ones when unset). */
  gatewayPorts?: number[];
  /** The demo app's publishable key (random when unset). */
  apiKey?: string;
  /** The services' LOG_LEVEL (info). */
  logLevel?: string;
  /** More settings for every service (e.g. RATE_LIMIT_AUTH_PER_MINUTE). */
  env?: Record<string, string>;
  /** PgBouncer's server connections per role (5). */
  poolSize?: number;
  /**
   * The partition drills' hosts (scripts/cluster/netns/cluster-net.ts): the Patroni nodes, the
   * NATS servers and chests-2 in network namespaces of their own. The caller removes it after `stop`.
   */
  net?: ClusterNet;
  /** Bound on the whole start (240 s). */
  startTimeoutMs?: number;
  /** Progress lines of the launcher. */
  say?: (line: string) => void;
  /** The children's lines (prefixed with their name); dropped when unset. */
  print?: (line: string) => void;
}

export interface Cluster {
  gatewayUrls: string[];
  apiKey: string;
  /** The demo app's secret key (studio console, admin API). */
  secretKey: string;
  /** Every NATS server, comma separated (what the services get as NATS_URL). */
  natsUrl: string;
  natsNodes: NatsNode[];
  /** Superuser URL of the cluster's database, directly (no PgBouncer): for ground truth. */
  databaseUrl: string;
  database: string;
  pgbouncerPort: number;
  /** The Postgres nodes under Patroni (option `postgres: 'patroni'`). */
  patroni?: PatroniCluster;
  /** The hosts in network namespaces (option `net`). */
  net?: ClusterNet;
  /** The temporary directory (NATS stores, PgBouncer's configuration). */
  dir: string;
  /** The children's names: n1..n3, pgbouncer, players-1, …, gateway-2. */
  names(): string[];
  pid(name: string): number | undefined;
  /** Whether the child runs now (false: killed, crashed, or not started again yet). */
  running(name: string): boolean;
  /** Sends SIGKILL (or `signal`) to one child; its exit is then not reported as unexpected. */
  kill(name: string, signal?: NodeJS.Signals): Promise<Ended>;
  /** Starts a killed child again (a NATS server keeps its store; PgBouncer takes the same port). */
  restart(name: string): void;
  /**
   * Waits until a running child is ready: a replica answers NATS' service API as often as its
   * service has replicas running, a gateway's /readyz is 200, a NATS server's /healthz is 200
   * (JetStream current), PgBouncer answers a query. Returns the milliseconds it waited.
   */
  ready(name: string, timeoutMs?: number): Promise<number>;
  /**
   * A rolling restart's step: SIGTERM (the child drains), wait for its exit, start it again, wait
   * until it is ready. How it exited and how long each half took.
   */
  replace(name: string, opts?: { stopTimeoutMs?: number; readyTimeoutMs?: number }): Promise<Replaced>;
  /** The name of the server that leads the grants stream (JetStream's Raft group for GRANTS). */
  grantsLeader(): Promise<string>;
  /**
   * Polls the grants stream's info (every 50 ms, through the servers other than `not`) until it
   * names a leader other than `not`; that leader's name.
   */
  waitForGrantsLeader(opts: { not?: string; timeoutMs?: number }): Promise<string>;
  /** Exits nobody asked for, one line each. */
  unexpectedExits: string[];
  /** Seconds each phase took: nats, postgres, migrations, services, total. */
  timings: Record<string, number>;
  /** Stops everything (gateways, services, PgBouncer, NATS), drops a fresh database, removes the directory. */
  stop(): Promise<void>;
}

export type { Replaced };

export const SERVICES_ORDER: ServiceName[] = ['players', 'wallet', 'chests', 'collections', 'egress', 'store', 'gateway'];

/** What every phase of the start reads. */
interface Start {
  sup: Supervisor;
  dir: string;
  say: (line: string) => void;
  print: (line: string) => void;
  timings: Record<string, number>;
  net?: ClusterNet;
}

const mark = (st: Start, phase: string, since: number) => (st.timings[phase] = Math.round((Date.now() - since) / 100) / 10);

/** Three servers, one JetStream cluster, a meta leader elected. */
async function startNats(st: Start): Promise<NatsNode[]> {
  const t = Date.now();
  const nodes = await planNatsCluster(st.dir, 3, st.net?.nats);
  for (const n of nodes) st.sup.launch(n.name, () => startNatsNode(n, st.print));
  st.say(`NATS: starting ${nodes.map((n) => `${n.name} on ${n.host}:${n.port} (routes ${n.routePort})`).join(', ')}`);
  const leader = await waitForMetaLeader(nodes, 60_000, st.sup.dead);
  mark(st, 'nats', t);
  st.say(`NATS: cluster of ${nodes.length} servers, JetStream meta leader ${leader} (${st.timings.nats} s)`);
  return nodes;
}

/**
 * Migrations directly on Postgres, each service as its own role (`--migrate-only`): they take
 * session advisory locks, which PgBouncer's transaction pooling would hand to whichever server
 * connection runs the next statement. players first: egress's migration moves the webhook
 * tables players' 0008 creates.
 */
async function migrate(st: Start, db: ClusterDatabase, common: Record<string, string>): Promise<void> {
  const t = Date.now();
  st.say(`migrations: ${SCHEMA_OWNERS.join(', ')} directly on Postgres, each as its own role (--migrate-only)`);
  const run = (owners: readonly SchemaOwner[]) =>
    Promise.all(
      owners.map(async (s) => {
        const name = `migrate-${s}`;
        const env = { ...process.env, ...common, DATABASE_URL: db.directUrl(s) };
        const args = ['--import', 'tsx', '--conditions=development', `services/${s}/src/main.ts`, '--migrate-only'];
        const c = track(name, spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }), st.print);
        st.sup.children.set(name, c);
        st.sup.expected.add(name);
        const end = await c.exited;
        if (end.code !== 0) throw new Error(`${s}'s migrations failed (${end.signal ?? `exit ${end.code}`}): ${c.tail().slice(-4).join(' / ')}`);
      }),
    );
  await run(['players']);
  await run(SCHEMA_OWNERS.filter((s) => s !== 'players'));
  mark(st, 'migrations', t);
  st.say(`migrations: done (${st.timings.migrations} s)`);
}

/** One replica: `<service>-<n>`, its lines labelled so. */
function startReplica(st: Start, name: ServiceName, i: number, env: NodeJS.ProcessEnv): void {
  const label = `${name}-${i + 1}`;
  st.sup.launch(label, () => {
    const lines: string[] = [];
    const onLine = (line: string) => {
      lines.push(line);
      if (lines.length > 40) lines.shift();
      st.print(`${label.padEnd(13)}| ${line}`);
    };
    const netns = st.net?.replicas.get(label)?.ns;
    const p = startServiceProcess(name, { cwd: ROOT, env, color: false, print: () => undefined, onLine, netns });
    return { name: label, child: p.child, exited: p.exited, hasExited: p.hasExited, tail: () => [...lines] };
  });
}

/**
 * players-1 first (it creates the demo app), then replica 1 of the others, then replica 2 of
 * everything; each wave waits until NATS' service API counts its replicas and its gateway is ready.
 */
async function startServices(
  st: Start,
  o: { natsUrl: string; replicas: number; gatewayUrls: string[]; env: (name: ServiceName, i: number) => NodeJS.ProcessEnv; deadline: number },
): Promise<void> {
  const t = Date.now();
  const wait = <T>(what: string, check: () => Promise<T | undefined>) =>
    waitFor(what, check, { timeoutMs: Math.max(10_000, o.deadline - Date.now()), everyMs: 500, dead: st.sup.dead });
  const nc = await connect({ servers: o.natsUrl, name: 'cluster-launcher' });
  try {
    const svc = nc.services.client({ strategy: RequestStrategy.Timer, maxWait: 1000 });
    const instances = async (name: string) => {
      let n = 0;
      for await (const _ of await svc.ping(name)) n += 1;
      return n;
    };
    const upTo = async (want: number, names: string[]) => {
      for (const n of names) if ((await instances(n)) < want) return undefined;
      return true;
    };
    const gatewayReady = async (url: string) => {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    };
    const backends = SERVICES_ORDER.filter((s) => s !== 'gateway');
    st.say('services: players-1 first (it creates the demo app)');
    startReplica(st, 'players', 0, o.env('players', 0));
    await wait('players-1 registers with NATS', () => upTo(1, ['players']));
    for (let i = 0; i < o.replicas; i++) {
      const wave = SERVICES_ORDER.filter((s) => !(s === 'players' && i === 0));
      st.say(`services: starting ${wave.map((s) => `${s}-${i + 1}`).join(', ')}`);
      for (const s of wave) startReplica(st, s, i, o.env(s, i));
      await wait(`replica ${i + 1} of every service registers with NATS`, () => upTo(i + 1, backends));
      await wait(`gateway-${i + 1} answers /readyz`, () => gatewayReady(o.gatewayUrls[i]!));
    }
  } finally {
    await nc.close().catch(() => undefined);
  }
  mark(st, 'services', t);
}

/** What `startCluster` returns, over the running children. */
function handle(
  sup: Supervisor,
  o: {
    gatewayUrls: string[];
    apiKey: string;
    secretKey: string;
    natsUrl: string;
    nodes: NatsNode[];
    db: ClusterDatabase;
    bouncer: Bouncer;
    patroni?: PatroniCluster;
    dir: string;
    timings: Record<string, number>;
    stop: () => Promise<void>;
  },
): Cluster {
  return {
    gatewayUrls: o.gatewayUrls,
    apiKey: o.apiKey,
    secretKey: o.secretKey,
    natsUrl: o.natsUrl,
    natsNodes: o.nodes,
    databaseUrl: o.db.adminUrl,
    database: o.db.name,
    pgbouncerPort: o.bouncer.port,
    patroni: o.patroni,
    dir: o.dir,
    names: () => [...sup.relaunch.keys()],
    pid: (name) => sup.children.get(name)?.child.pid,
    running: (name) => sup.children.get(name)?.hasExited() === false,
    async kill(name, signal = 'SIGKILL') {
      const c = sup.children.get(name);
      if (!c || !sup.relaunch.has(name)) throw new Error(`no child named ${name} (names: ${[...sup.relaunch.keys()].join(', ')})`);
      sup.expected.add(name);
      if (!c.hasExited()) c.child.kill(signal);
      return c.exited;
    },
    restart(name) {
      const make = sup.relaunch.get(name);
      if (!make) throw new Error(`cannot restart ${name}`);
      if (!sup.children.get(name)?.hasExited()) throw new Error(`${name} is still running`);
      sup.launch(name, make);
    },
    ready: (name, timeoutMs = 60_000) => readyOf(sup, o, name, timeoutMs),
    replace: (name, opts = {}) => replaceChild(sup, name, (n, t) => readyOf(sup, o, n, t), opts),
    grantsLeader: () => grantsLeaderOf(o.natsUrl),
    waitForGrantsLeader: ({ not, timeoutMs = 30_000 }) => waitForGrantsLeaderOf(o.nodes, not, timeoutMs),
    unexpectedExits: sup.unexpectedExits,
    timings: o.timings,
    stop: o.stop,
  };
}

/** Starts the cluster; on any failure stops what it started and throws. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const say = opts.say ?? (() => undefined);
  const replicas = opts.replicas ?? 2;
  let baseUrl = opts.databaseUrl || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = opts.redisUrl || process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const apiKey = opts.apiKey ?? `ccs_cluster_${randomBytes(16).toString('hex')}`;
  const secretKey = `ccs_cluster_secret_${randomBytes(16).toString('hex')}`;
  const redisPrefix = `cluster-${randomBytes(3).toString('hex')}:`;
  const started = Date.now();
  const dir = mkdtempSync(path.join(tmpdir(), 'ccs-cluster-'));
  chmodSync(dir, 0o755); // PgBouncer, started as root, runs as postgres and reads its files here
  const st: Start = { sup: new Supervisor(say), dir, say, print: opts.print ?? (() => undefined), timings: {}, net: opts.net };
  let db: ClusterDatabase | undefined;
  let patroni: PatroniCluster | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await st.sup.stopAll();
      if (patroni) await patroni.stop().catch((err) => say(`could not stop Patroni: ${String(err)}`));
      else if (db) await dropDatabase(baseUrl, db).catch((err) => say(`could not drop database ${db?.name}: ${String(err)}`));
      await clearRedis(redisUrl, redisPrefix).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    })());

  try {
    const nodes = await startNats(st);
    const natsUrl = natsUrlOf(nodes);
    // Postgres: a database, a role per service, PgBouncer in transaction mode in front.
    const t = Date.now();
    if (opts.postgres === 'patroni') {
      say('Postgres: three etcd members, three Postgres nodes under Patroni (synchronous, strict), HAProxy to the primary');
      patroni = await startPatroni({ dir, say: (line) => say(line), print: st.print, net: opts.net?.patroni });
      baseUrl = patroni.url;
    }
    const cdb = (db = await prepareDatabase(baseUrl, opts.useExistingDatabase ?? false));
    say(`Postgres: database ${cdb.name}${cdb.created ? ' (new)' : ''}, roles ${Object.values(cdb.roles).join(', ')} (search_path = their schema)`);
    const { bouncer, child } = await startPgbouncer(dir, baseUrl, cdb, opts.poolSize ?? 5, st.print);
    // The first launch is the process startPgbouncer started; a restart spawns one on the same configuration (port).
    let first: typeof child | undefined = child;
    st.sup.launch('pgbouncer', () => {
      const c = first ?? spawnPgbouncer(bouncer.configFile, st.print);
      first = undefined;
      return c;
    });
    mark(st, 'postgres', t);
    say(`PgBouncer: transaction pooling on 127.0.0.1:${bouncer.port} (${st.timings.postgres} s)`);

    const common = commonEnv({ natsUrl, redisUrl, redisPrefix, apiKey, secretKey, logLevel: opts.logLevel, extra: opts.env });
    await migrate(st, cdb, common);

    const gatewayPorts = opts.gatewayPorts ?? (await freePorts(replicas));
    const metricsPorts = await freePorts(replicas);
    const gatewayUrls = gatewayPorts.slice(0, replicas).map((p) => `http://127.0.0.1:${p}`);
    const envOf = (name: ServiceName, i: number) => serviceEnv(name, common, bouncer, { port: gatewayPorts[i], metricsPort: metricsPorts[i] });
    const env = opts.net ? await opts.net.withRelays(envOf) : envOf;
    await startServices(st, { natsUrl, replicas, gatewayUrls, env, deadline: started + (opts.startTimeoutMs ?? 240_000) });
    mark(st, 'total', started);
    say(`services: ${replicas} replicas of each up (${st.timings.services} s); the whole cluster in ${st.timings.total} s`);

    const cluster = handle(st.sup, { gatewayUrls, apiKey, secretKey, natsUrl, nodes, db: cdb, bouncer, patroni, dir, timings: st.timings, stop });
    return { ...cluster, net: opts.net };
  } catch (err) {
    await stop();
    throw err;
  }
}

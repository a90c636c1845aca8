/**
 * Postgres with failover for the cluster mode (`npm run stack:cluster -- --postgres patroni`,
 * `CLUSTER_POSTGRES=patroni npm run chaos -- --cluster`): three etcd members, three Postgres 15
 * nodes under Patroni with synchronous_mode and synchronous_mode_strict (a commit is acknowledged
 * only once a standby has it), and HAProxy routing to the node whose Patroni REST API answers 200
 * on /primary. Every process is a child of this one; every file lives in one temporary directory,
 * removed by `stop` (and, when this process exits without it, every process is killed).
 *
 * Debian's packages: `apt-get install patroni etcd-server haproxy` (PATRONI_BIN, ETCD_BIN,
 * HAPROXY_BIN name other binaries). Postgres refuses to run as root: as root, Patroni runs as the
 * `postgres` user (PRIVATE_PG_USER).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findPostgresBinDir } from '@ccs/shared/testing';
import {
  checkDcsTiming,
  DCS_TIMING,
  ETCD,
  etcdArgs,
  HAPROXY,
  haproxyConfig,
  PATRONICTL,
  patroniConfig,
  patroniCommand,
  patroniUnavailable,
  SCOPE,
  type PatroniNet,
  type EtcdMember,
  type PgNode,
} from './patroni-config.js';
import { waitForHaproxyRoute } from './haproxy-route.js';
import { freePorts, httpStatus, sleep, stopChild, track, waitFor, type Child } from './processes.js';

export { checkDcsTiming, DCS_TIMING, patroniUnavailable, type EtcdMember, type PatroniNet, type PgNode } from './patroni-config.js';

export interface PatroniCluster {
  /** postgres://postgres@127.0.0.1:<HAProxy>/postgres: the primary, wherever it is. */
  url: string;
  /** HAProxy's port. */
  port: number;
  dir: string;
  etcd: EtcdMember[];
  nodes: PgNode[];
  /** The node whose REST API answers 200 on /primary, or undefined (none now). */
  primary(): Promise<string | undefined>;
  /** Members as Patroni's /cluster lists them: name, role (leader, sync_standby, replica), state, timeline. */
  members(): Promise<{ name: string; role: string; state: string; timeline?: number }[]>;
  /** The machine of a node lost: SIGKILL to its Patroni, then to its Postgres (postmaster). */
  killNode(name: string): Promise<void>;
  /** Starts a node's Patroni again (it rejoins as a standby, pg_rewind if needed). */
  startNode(name: string): void;
  /** `patronictl switchover` to `candidate` (a standby); its output. */
  switchover(candidate: string): Promise<string>;
  /** The same through the leader's REST API (POST /switchover, what patronictl sends), without patronictl's start-up time. */
  switchoverByApi(candidate: string): Promise<void>;
  /** Until HAProxy sends new connections to `name` (or the primary) only: six in a row reach it. */
  waitForHaproxyOn(name?: string, timeoutMs?: number): Promise<void>;
  /**
   * Points a standby at `upstream` (Patroni's `replicatefrom` tag: cascading replication), or back
   * at the primary (undefined): its file rewritten, its Patroni reloaded (SIGHUP).
   */
  replicateFrom(name: string, upstream: string | undefined): void;
  /** The standbys streaming from a node now (its pg_stat_replication, as its REST API reports it). */
  streamingFrom(name: string): Promise<string[]>;
  /** Until one primary and both standbys stream from it, a synchronous one among them. */
  healthy(timeoutMs?: number): Promise<void>;
  /** The postmaster's pid of a node (from postmaster.pid), if it runs. */
  postmasterPid(name: string): number | undefined;
  stop(): Promise<void>;
}

function runAsPostgres(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const user = process.env.PRIVATE_PG_USER ?? 'postgres';
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error(`running as root and there is no "${user}" user to run Postgres as (set PRIVATE_PG_USER)`);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

type Member = { name: string; role: string; state: string; timeline?: number };

/** The running topology: its children (etcd1..3, pg1..3 for the Patroni processes, haproxy). */
class Topology implements PatroniCluster {
  url = '';
  port = 0;
  readonly children = new Map<string, Child>();
  /** Children whose exit was asked for. */
  readonly expected = new Set<string>();
  private readonly binDir = findPostgresBinDir()!;
  private readonly as = runAsPostgres();
  private readonly onExit = () => this.killAll();

  constructor(
    readonly dir: string,
    readonly etcd: EtcdMember[],
    readonly nodes: PgNode[],
    private readonly print: (line: string) => void,
  ) {
    // A process that exits without stop() must not leave Postgres servers behind (Patroni starts them in their own session).
    process.once('exit', this.onExit);
  }

  readonly dead = (): string | undefined => {
    for (const c of this.children.values())
      if (c.hasExited() && !this.expected.has(c.name)) return `${c.name} exited: ${c.tail().slice(-6).join(' / ')}`;
    return undefined;
  };

  private node(name: string): PgNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name} (nodes: ${this.nodes.map((x) => x.name).join(', ')})`);
    return n;
  }

  private api(name: string): string {
    const n = this.node(name);
    return `http://${n.host ?? '127.0.0.1'}:${n.apiPort}`;
  }

  postmasterPid(name: string): number | undefined {
    try {
      const pid = Number(readFileSync(path.join(this.node(name).dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (!pid) return undefined;
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  private killAll(): void {
    for (const c of this.children.values()) if (!c.hasExited()) c.child.kill('SIGKILL');
    for (const n of this.nodes) {
      const pid = this.postmasterPid(n.name);
      if (pid) process.kill(pid, 'SIGKILL');
    }
  }

  startEtcd(): void {
    for (const m of this.etcd)
      this.children.set(m.name, track(m.name, spawn(ETCD, etcdArgs(m, this.etcd, this.dir), { stdio: ['ignore', 'pipe', 'pipe'] }), this.print));
  }

  /** Writes each node's folder and Patroni file (owned by the user Postgres runs as). */
  prepareNodes(): void {
    for (const n of this.nodes) {
      mkdirSync(n.dir, { recursive: true, mode: 0o700 });
      writeFileSync(n.configFile, JSON.stringify(patroniConfig(n, this.etcd, this.binDir), null, 2));
      if (this.as) {
        chownSync(n.dir, this.as.uid, this.as.gid);
        chownSync(n.configFile, this.as.uid, this.as.gid);
      }
    }
  }

  startNode(name: string): void {
    const n = this.node(name);
    if (this.children.get(name)?.hasExited() === false) throw new Error(`${name}'s Patroni is still running`);
    this.expected.delete(name);
    const env = { ...process.env, PATH: `${this.binDir}:${process.env.PATH}`, HOME: n.dir, PGPASSFILE: path.join(n.dir, 'pgpass') };
    const opts = { stdio: ['ignore', 'pipe', 'pipe'] as ('ignore' | 'pipe')[], env, uid: this.as?.uid, gid: this.as?.gid, cwd: n.dir };
    const cmd = patroniCommand(n, this.as);
    this.children.set(name, track(name, spawn(cmd.file, cmd.args, { ...opts, uid: cmd.as?.uid, gid: cmd.as?.gid }), this.print));
  }

  private get statsSocket(): string {
    return path.join(this.dir, 'haproxy.sock');
  }

  startHaproxy(port: number): void {
    const file = path.join(this.dir, 'haproxy.cfg');
    writeFileSync(file, haproxyConfig(port, this.nodes, this.statsSocket));
    this.children.set('haproxy', track('haproxy', spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] }), this.print));
    this.port = port;
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  async primary(): Promise<string | undefined> {
    const statuses = await Promise.all(this.nodes.map((n) => httpStatus(`${this.api(n.name)}/primary`)));
    return this.nodes[statuses.indexOf(200)]?.name;
  }

  async members(): Promise<Member[]> {
    for (const n of this.nodes) {
      const res = await fetch(`${this.api(n.name)}/cluster`, { signal: AbortSignal.timeout(1500) }).catch(() => undefined);
      if (res?.status === 200) return ((await res.json()) as { members: Member[] }).members;
    }
    return [];
  }

  replicateFrom(name: string, upstream: string | undefined): void {
    const n = this.node(name);
    const config = JSON.parse(readFileSync(n.configFile, 'utf8')) as { tags: Record<string, unknown> };
    if (upstream === undefined) delete config.tags.replicatefrom;
    else config.tags.replicatefrom = upstream;
    writeFileSync(n.configFile, JSON.stringify(config, null, 2));
    const c = this.children.get(name);
    if (c && !c.hasExited()) c.child.kill('SIGHUP');
  }

  async streamingFrom(name: string): Promise<string[]> {
    const res = await fetch(`${this.api(name)}/patroni`, { signal: AbortSignal.timeout(1500) }).catch(() => undefined);
    if (res?.status !== 200) return [];
    const body = (await res.json()) as { replication?: { application_name: string; state: string }[] };
    return (body.replication ?? []).filter((r) => r.state === 'streaming').map((r) => r.application_name);
  }

  async healthy(timeoutMs = 120_000): Promise<void> {
    await waitFor(
      'Patroni: a primary and two streaming standbys, one synchronous',
      async () => {
        const m = await this.members();
        const leader = m.filter((x) => x.role === 'leader' && x.state === 'running');
        const standbys = m.filter((x) => x.role !== 'leader' && (x.state === 'streaming' || x.state === 'running'));
        if (leader.length !== 1 || standbys.length !== 2 || !standbys.some((x) => x.role === 'sync_standby')) return undefined;
        // A killed node's member key outlives it until its ttl: each node's own API must say its Postgres runs.
        const own = await Promise.all(this.nodes.map((n) => httpStatus(`${this.api(n.name)}/health`)));
        return own.every((st) => st === 200) ? true : undefined;
      },
      { timeoutMs, everyMs: 500, dead: this.dead },
    );
  }

  async waitForPrimary(name: string, timeoutMs: number): Promise<void> {
    await waitFor(
      `Patroni: ${name} bootstrapped, primary`,
      async () => ((await httpStatus(`${this.api(name)}/primary`)) === 200 ? true : undefined),
      {
        timeoutMs,
        everyMs: 500,
        dead: this.dead,
      },
    );
  }

  async waitForEtcd(): Promise<void> {
    await waitFor(
      'etcd: every member healthy',
      async () =>
        (await Promise.all(this.etcd.map((m) => httpStatus(`http://127.0.0.1:${m.clientPort}/health`)))).every((s) => s === 200) ? true : undefined,
      { timeoutMs: 30_000, everyMs: 250, dead: this.dead },
    );
  }

  async killNode(name: string): Promise<void> {
    const c = this.children.get(name);
    if (!c) throw new Error(`no node ${name}`);
    const pid = this.postmasterPid(name);
    this.expected.add(name);
    if (!c.hasExited()) c.child.kill('SIGKILL');
    await c.exited;
    if (pid) process.kill(pid, 'SIGKILL');
    // Its backends notice the postmaster's death and exit; a bounded wait for it to be gone.
    for (let i = 0; i < 50 && this.postmasterPid(name); i++) await sleep(100);
  }

  async switchoverByApi(candidate: string): Promise<void> {
    const leader = await this.primary();
    if (!leader) throw new Error('no primary to switch over from');
    const res = await fetch(`${this.api(leader)}/switchover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ leader, candidate }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`switchover ${leader} → ${candidate}: ${res.status} ${text}`);
  }

  async waitForHaproxyOn(name?: string, timeoutMs = 30_000): Promise<void> {
    const names = this.nodes.map((n) => n.name);
    const port = name === undefined ? undefined : this.node(name).pgPort;
    await waitForHaproxyRoute({ socket: this.statsSocket, url: this.url, names, name, port, timeoutMs, dead: this.dead });
  }

  async switchover(candidate: string): Promise<string> {
    const leader = await this.primary();
    const args = ['-c', this.nodes[0]!.configFile, 'switchover', SCOPE, '--candidate', candidate, '--force', ...(leader ? ['--leader', leader] : [])];
    const env = { ...process.env, PATH: `${this.binDir}:${process.env.PATH}` };
    const r = spawnSync(PATRONICTL, args, { encoding: 'utf8', env, timeout: 60_000 });
    if (r.status !== 0) throw new Error(`patronictl switchover failed: ${r.stdout}${r.stderr}`);
    return r.stdout.trim();
  }

  /** HAProxy, then the Patroni nodes (each stops its Postgres), then etcd; a Postgres left over gets SIGKILL. */
  async stop(): Promise<void> {
    const groups = [['haproxy'], this.nodes.map((n) => n.name), this.etcd.map((m) => m.name)];
    for (const names of groups) {
      const running = names.map((n) => this.children.get(n)).filter((c): c is Child => c !== undefined);
      for (const c of running) this.expected.add(c.name);
      await Promise.all(running.map((c) => stopChild(c, 20_000)));
    }
    this.killAll();
    process.removeListener('exit', this.onExit);
  }
}

/** Where everything goes: free loopback ports, a folder per node; with `net`, the nodes' namespaces and addresses. */
async function plan(dir: string, net?: PatroniNet): Promise<{ etcd: EtcdMember[]; nodes: PgNode[]; haPort: number }> {
  const ports = await freePorts(13);
  const etcd = [0, 1, 2].map((i) => ({ name: `etcd${i + 1}`, clientPort: ports[i * 2]!, peerPort: ports[i * 2 + 1]!, host: net?.etcdHost }));
  const nodes = [0, 1, 2].map((i) => {
    const d = path.join(dir, `pg${i + 1}`);
    const host = net?.hosts[i];
    return {
      name: `pg${i + 1}`,
      host: host?.address,
      netns: host?.ns,
      pgPort: ports[6 + i * 2]!,
      apiPort: ports[7 + i * 2]!,
      dir: d,
      dataDir: path.join(d, 'data'),
      configFile: path.join(d, 'patroni.yml'),
    };
  });
  return { etcd, nodes, haPort: ports[12]! };
}

/**
 * Starts etcd, then pg1 (it bootstraps the cluster), then pg2 and pg3 (they clone it), then
 * HAProxy; returns once the primary answers through HAProxy with a synchronous standby.
 */
export async function startPatroni(o: {
  dir: string;
  say: (line: string) => void;
  print: (line: string) => void;
  timeoutMs?: number;
  net?: PatroniNet;
}): Promise<PatroniCluster> {
  checkDcsTiming(DCS_TIMING);
  const why = patroniUnavailable();
  if (why) throw new Error(why);
  const dir = path.join(o.dir, 'patroni');
  mkdirSync(dir, { recursive: true });
  // Patroni runs as postgres: it must reach its node's folder.
  chmodSync(o.dir, 0o755);
  chmodSync(dir, 0o755);
  const { etcd, nodes, haPort } = await plan(dir, o.net);
  const t = new Topology(dir, etcd, nodes, o.print);
  const started = Date.now();
  const took = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  try {
    t.startEtcd();
    await t.waitForEtcd();
    o.say(`etcd: ${etcd.map((m) => `${m.name} 127.0.0.1:${m.clientPort}`).join(', ')} (${took()})`);
    t.prepareNodes();
    t.startNode('pg1');
    await t.waitForPrimary('pg1', o.timeoutMs ?? 90_000);
    t.startNode('pg2');
    t.startNode('pg3');
    await t.healthy(o.timeoutMs ?? 120_000);
    t.startHaproxy(haPort);
    await t.waitForHaproxyOn();
    o.say(
      `Patroni: ${nodes.map((n) => `${n.name} 127.0.0.1:${n.pgPort} (API ${n.apiPort})`).join(', ')}; primary ${await t.primary()}; HAProxy 127.0.0.1:${haPort} (${took()})`,
    );
    return t;
  } catch (err) {
    await t.stop();
    throw err;
  }
}

/**
 * Partitions, not kills (`CLUSTER_PARTITIONS=1 npm run chaos -- --cluster`): each during the
 * history drill's load of keyed writes (./history.ts), a host of the cluster cut off in its
 * network namespace (scripts/cluster/netns/) while it lives on, then healed, then the check:
 *
 * - the Postgres primary cut off from etcd and its standbys, HAProxy and its clients still
 *   reaching it: Patroni must demote it when it cannot renew the leader key, before a standby
 *   takes over (no moment with two primaries), and no acknowledged write may be lost;
 * - the NATS server leading the grants stream cut off from its peers mid-burst, its clients
 *   still connected to it: no write lost, no grant lost or doubled;
 * - a chests replica cut off from NATS: the other replica serves; nothing lost.
 */
import pg from 'pg';
import type { ClusterNet } from '../netns/cluster-net.js';
import type { PatroniCluster } from '../patroni.js';
import { sleep } from '../processes.js';
import type { DrillScenario } from './accounting.js';
import type { Drill } from './index.js';
import { historyScenario } from './patroni-faults.js';

/** How long the NATS server and the replica stay cut off (the load goes on meanwhile). */
export const HOLD_MS = 20_000;
/** Bound on waiting for the cut primary to step down and for a standby to take over. */
const FAILOVER_BOUND_MS = 90_000;
/** Bound on watching who is primary (the scenario's own bound is 400 s). */
const WATCH_BOUND_MS = 300_000;
/** Bound on a healed replica answering NATS' service API again. */
const REJOIN_BOUND_MS = 90_000;

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function netOf(d: Drill): ClusterNet {
  const n = d.cluster.net;
  if (!n) throw new Error('this scenario needs the cluster in network namespaces (CLUSTER_PARTITIONS=1)');
  return n;
}

function patroniOf(d: Drill): PatroniCluster {
  const p = d.cluster.patroni;
  if (!p) throw new Error('this scenario needs the cluster on Patroni');
  return p;
}

/** Every host's cuts removed (also after a scenario that failed halfway). */
export function healAll(net: ClusterNet): void {
  for (const h of net.lab.hosts.keys()) net.lab.heal(h);
}

/** Whether a node's Postgres, asked directly, is a primary (true), a standby (false), or does not answer (undefined). */
async function isPrimary(node: { host?: string; pgPort: number }): Promise<boolean | undefined> {
  const c = new pg.Client({
    host: node.host,
    port: node.pgPort,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 1000,
    query_timeout: 1000,
  });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const r = await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    return !r.rows[0]!.r;
  } catch {
    return undefined;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Whether a node's Patroni REST API answers 200 on /primary (what HAProxy routes by). */
async function answersPrimary(node: { host?: string; apiPort: number }): Promise<boolean> {
  const res = await fetch(`http://${node.host ?? '127.0.0.1'}:${node.apiPort}/primary`, {
    method: 'OPTIONS',
    signal: AbortSignal.timeout(1000),
  }).catch(() => undefined);
  await res?.body?.cancel().catch(() => undefined);
  return res?.status === 200;
}

/**
 * Watches who is primary every 200 ms from the cut until stopped: when the cut node last said it
 * was (Patroni's REST API answering 200 on /primary, or its Postgres out of recovery) and when
 * another first did. Both at once would be two primaries.
 */
function watchPrimaries(p: PatroniCluster, cut: string, since: number) {
  const node = p.nodes.find((n) => n.name === cut)!;
  const seen = { cutAt: since, cutLastPrimaryAt: since, cutPostgresLastPrimaryAt: since, otherFirstAt: 0, other: '', overlap: 0 };
  let stopped = false;
  const running = (async () => {
    // Bounded on its own too: a scenario that fails before stopping it leaves no loop behind.
    while (!stopped && Date.now() - since < WATCH_BOUND_MS) {
      // Each node's own REST API, as HAProxy asks it, and the cut node's Postgres itself.
      const [apis, own] = await Promise.all([Promise.all(p.nodes.map((n) => answersPrimary(n))), isPrimary(node)]);
      const now = Date.now();
      const cutSays = apis[p.nodes.indexOf(node)]!;
      const other = p.nodes.find((n, i) => n !== node && apis[i])?.name ?? '';
      if (cutSays) seen.cutLastPrimaryAt = now;
      if (own === true) seen.cutPostgresLastPrimaryAt = now;
      if (other && !seen.otherFirstAt) {
        seen.otherFirstAt = now;
        seen.other = other;
      }
      if (other && (cutSays || own === true)) seen.overlap += 1;
      await sleep(200);
    }
  })();
  return {
    seen,
    stop: async () => {
      stopped = true;
      await running;
      return seen;
    },
  };
}

/**
 * The primary cut off from etcd and from both standbys (routes through the lab's sink in its
 * namespace), HAProxy and the services still reaching it. Patroni there cannot renew the leader
 * key and must demote it within loop_wait + 2 × retry_timeout; the leader key expires after
 * ttl and a standby takes over. Commits on the cut primary wait for a synchronous standby it can
 * no longer reach (strict mode): none is acknowledged. Healed once a standby took over and
 * writes succeed again; the old primary rejoins as a standby.
 */
export function primaryPartitioned(d: Drill): Promise<DrillScenario> {
  const p = patroniOf(d);
  const net = netOf(d);
  let cut = '';
  let watch: ReturnType<typeof watchPrimaries> | undefined;
  const problems: string[] = [];
  return historyScenario(
    d,
    'Postgres primary partitioned from etcd and its standbys',
    async () => {
      cut = (await p.primary()) ?? '';
      if (!cut) throw new Error('no primary to cut off');
      const others = p.nodes.filter((n) => n.name !== cut).map((n) => n.host!);
      net.lab.cut(cut, [net.etcdHost, ...others]);
      const faultAt = Date.now();
      watch = watchPrimaries(p, cut, faultAt);
      return { note: `${cut} cut off from etcd (${net.etcdHost}) and from ${others.join(', ')}; HAProxy and clients still reach it`, faultAt };
    },
    async () => {
      const faultAt = watch!.seen.cutAt;
      // The load ended once writes succeeded again: a standby is primary. Wait (bounded) until the cut node stepped down everywhere.
      const deadline = Date.now() + FAILOVER_BOUND_MS;
      while (Date.now() < deadline && (watch!.seen.cutLastPrimaryAt > Date.now() - 1000 || watch!.seen.cutPostgresLastPrimaryAt > Date.now() - 1000))
        await sleep(200);
      const seen = await watch!.stop();
      net.lab.heal(cut);
      const t = Date.now();
      if (!seen.otherFirstAt) problems.push('no standby took over');
      if (seen.overlap) problems.push(`two primaries at once in ${seen.overlap} looks (200 ms apart)`);
      if (seen.cutLastPrimaryAt > Date.now() - 1500 || seen.cutPostgresLastPrimaryAt > Date.now() - 1500)
        problems.push(`${cut} still primary ${secs(FAILOVER_BOUND_MS)} after being cut off`);
      await p.healthy(180_000);
      const line =
        `${cut} last answered /primary ${secs(seen.cutLastPrimaryAt - faultAt)} and its Postgres was last primary ` +
        `${secs(seen.cutPostgresLastPrimaryAt - faultAt)} after the cut (looks 200 ms apart plus their own time); ` +
        `${seen.other || 'none'} primary ${seen.otherFirstAt ? secs(seen.otherFirstAt - faultAt) : '–'} after it; two primaries at once: ${seen.overlap ? 'YES' : 'never'}; ` +
        `healed, ${cut} back as a standby in ${secs(Date.now() - t)}${problems.length ? `; VIOLATIONS: ${problems.join('; ')}` : ''}`;
      d.say(`Postgres primary partitioned: ${line}`);
      return line;
    },
    { problems },
  );
}

/**
 * The NATS server leading the grants stream cut off from the other two (its routes and their
 * Raft traffic), its clients still connected to it, for HOLD_MS while the load goes on; then
 * healed. The others elect a leader for the grants stream; the outbox's publishes through the cut
 * server get no acknowledgement and are sent again (deduplicated by message id).
 */
export function natsServerPartitioned(d: Drill): Promise<DrillScenario> {
  const net = netOf(d);
  let cut = '';
  let leaderNote = '';
  return historyScenario(
    d,
    'grants leader NATS server partitioned from its peers',
    async () => {
      cut = await d.cluster.grantsLeader();
      if (!cut) throw new Error('the grants stream has no leader');
      const peers = d.cluster.natsNodes.filter((n) => n.name !== cut).map((n) => n.host);
      const faultAt = Date.now();
      net.lab.cut(cut, peers);
      try {
        const leader = await d.cluster.waitForGrantsLeader({ not: cut, timeoutMs: HOLD_MS + 30_000 }).catch(() => 'none');
        leaderNote = `grants leader ${leader} ${secs(Date.now() - faultAt)} after the cut`;
        await sleep(Math.max(0, faultAt + HOLD_MS - Date.now()));
      } finally {
        net.lab.heal(cut);
      }
      return {
        note: `${cut} (grants leader) cut off from ${peers.join(', ')} for ${secs(HOLD_MS)}, its clients still connected; ${leaderNote}; healed`,
        faultAt,
      };
    },
    async () => {
      const waited = await d.cluster.ready(cut, 120_000);
      return `${cut} current again (JetStream /healthz) ${secs(waited)} after the load`;
    },
  );
}

/** chests-2 cut off from every NATS server for HOLD_MS while the load goes on (its Postgres and Redis still reachable); then healed. */
export function replicaPartitioned(d: Drill, replica = 'chests-2'): Promise<DrillScenario> {
  const net = netOf(d);
  const problems: string[] = [];
  return historyScenario(
    d,
    `${replica} partitioned from NATS`,
    async () => {
      const servers = d.cluster.natsNodes.map((n) => n.host);
      const faultAt = Date.now();
      net.lab.cut(replica, servers);
      try {
        await sleep(HOLD_MS);
      } finally {
        net.lab.heal(replica);
      }
      return { note: `${replica} cut off from ${servers.join(', ')} for ${secs(HOLD_MS)} (Postgres and Redis still reachable); healed`, faultAt };
    },
    async () => {
      // Bounded: a replica that stays deaf after the heal is a violation, not the end of the check.
      const t = Date.now();
      const waited = await d.cluster.ready(replica, REJOIN_BOUND_MS).catch(() => undefined);
      if (waited === undefined) problems.push(`${replica} not answering NATS' service API ${secs(REJOIN_BOUND_MS)} after the load`);
      return waited === undefined
        ? `${replica} NOT answering NATS' service API ${secs(Date.now() - t)} after the load`
        : `${replica} answering NATS' service API again ${secs(waited)} after the load`;
    },
    { problems },
  );
}

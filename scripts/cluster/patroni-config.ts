/**
 * The configuration of the Patroni topology (scripts/cluster/patroni.ts): the binaries, Patroni's
 * timing and its check, and each program's settings (etcd's command line, Patroni's file,
 * HAProxy's file).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { findPostgresBinDir } from '@ccs/shared/testing';
import { IP, type NetHost } from './netns/lab.js';

export const PATRONI = process.env.PATRONI_BIN || '/usr/bin/patroni';
export const PATRONICTL = process.env.PATRONICTL_BIN || '/usr/bin/patronictl';
export const ETCD = process.env.ETCD_BIN || '/usr/bin/etcd';
export const HAPROXY = process.env.HAPROXY_BIN || '/usr/sbin/haproxy';

const LOOPBACK = '127.0.0.1';

/** The cluster's name in etcd (Patroni's scope). */
export const SCOPE = 'ccs';

/**
 * Patroni's timing (bootstrap.dcs). The leader key lives `ttl` seconds; the primary renews it
 * every `loop_wait` seconds and gives up on etcd or Postgres after `retry_timeout`: a primary cut
 * off from etcd demotes itself before its key expires only when loop_wait + 2 × retry_timeout ≤
 * ttl, which Patroni 3.0.2 does not check (checkDcsTiming does). A lost primary is replaced about
 * `ttl` seconds after its last renewal.
 */
export const DCS_TIMING = { ttl: 20, loop_wait: 1, retry_timeout: 5 };

/** Throws unless loop_wait + 2 × retry_timeout ≤ ttl. */
export function checkDcsTiming(t: { ttl: number; loop_wait: number; retry_timeout: number }): void {
  if (t.loop_wait + 2 * t.retry_timeout > t.ttl)
    throw new Error(
      `Patroni timing: loop_wait (${t.loop_wait}) + 2 × retry_timeout (${t.retry_timeout}) must not exceed ttl (${t.ttl}): a primary cut off from etcd would keep accepting writes after a standby took over`,
    );
}

/** Why the Patroni topology cannot run here, or undefined. */
export function patroniUnavailable(): string | undefined {
  const missing = [
    ['patroni', PATRONI],
    ['patronictl', PATRONICTL],
    ['etcd', ETCD],
    ['haproxy', HAPROXY],
  ].filter(([, bin]) => !existsSync(bin!));
  if (missing.length)
    return `no ${missing.map(([n, b]) => `${n} at ${b}`).join(', ')}: apt-get install patroni etcd-server haproxy (or set PATRONI_BIN, PATRONICTL_BIN, ETCD_BIN, HAPROXY_BIN)`;
  if (!findPostgresBinDir()) return 'no Postgres binaries (initdb, pg_ctl, postgres) found';
  return undefined;
}

export interface EtcdMember {
  name: string;
  /** The address its clients (Patroni, patronictl) use; 127.0.0.1 unless the Patroni nodes live in network namespaces. */
  host?: string;
  clientPort: number;
  peerPort: number;
}

export interface PgNode {
  /** pg1, pg2, pg3. */
  name: string;
  /** Its address (Postgres and the REST API listen there): 127.0.0.1, or its own in a network namespace (`netns`). */
  host?: string;
  /** The network namespace its Patroni (and so its Postgres) runs in (scripts/cluster/netns/lab.ts). */
  netns?: string;
  pgPort: number;
  /** Patroni's REST API. */
  apiPort: number;
  dir: string;
  dataDir: string;
  configFile: string;
}

/**
 * The Patroni nodes in network namespaces (the partition drills, scripts/cluster/netns/lab.ts):
 * three hosts, one per node, and the address etcd's clients use (one of this namespace's, which a
 * node can be cut from on its own).
 */
export interface PatroniNet {
  etcdHost: string;
  hosts: NetHost[];
}

/**
 * How a node's Patroni is started: as the Postgres user (`as`, when running as root), in its
 * namespace when it has one (`ip netns exec` needs root: it enters the namespace, then setpriv
 * drops to the Postgres user; each execs the next, so the pid is Patroni's).
 */
export function patroniCommand(n: PgNode, as?: { uid: number; gid: number }): { file: string; args: string[]; as?: { uid: number; gid: number } } {
  if (!n.netns) return { file: PATRONI, args: [n.configFile], as };
  const user = as ? ['setpriv', `--reuid=${as.uid}`, `--regid=${as.gid}`, '--clear-groups'] : [];
  return { file: IP, args: ['netns', 'exec', n.netns, ...user, PATRONI, n.configFile] };
}

/** One etcd member's command line (a three-member cluster on loopback). */
export function etcdArgs(m: EtcdMember, all: EtcdMember[], dir: string): string[] {
  const host = m.host ?? LOOPBACK;
  return [
    `--name=${m.name}`,
    `--data-dir=${path.join(dir, m.name)}`,
    `--listen-client-urls=${[...new Set([LOOPBACK, host])].map((h) => `http://${h}:${m.clientPort}`).join(',')}`,
    `--advertise-client-urls=http://${host}:${m.clientPort}`,
    `--listen-peer-urls=http://127.0.0.1:${m.peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${m.peerPort}`,
    `--initial-cluster=${all.map((o) => `${o.name}=http://127.0.0.1:${o.peerPort}`).join(',')}`,
    '--initial-cluster-token=ccs-cluster',
    '--initial-cluster-state=new',
    // A loaded machine (two cores, many processes) misses 100 ms heartbeats: slower ones, no spurious elections.
    '--heartbeat-interval=200',
    '--election-timeout=2000',
    '--log-level=warn',
  ];
}

/** One node's Patroni configuration (JSON, which YAML reads). */
export function patroniConfig(n: PgNode, etcd: EtcdMember[], binDir: string): Record<string, unknown> {
  const host = n.host ?? LOOPBACK;
  // In a network namespace the other nodes and HAProxy connect from the lab's subnet.
  const lab = host === LOOPBACK ? [] : ['host all all samenet trust', 'host replication all samenet trust'];
  return {
    scope: SCOPE,
    name: n.name,
    log: { level: 'WARNING' },
    restapi: { listen: `${host}:${n.apiPort}`, connect_address: `${host}:${n.apiPort}` },
    etcd3: { hosts: etcd.map((m) => `${m.host ?? LOOPBACK}:${m.clientPort}`) },
    bootstrap: {
      dcs: {
        ...DCS_TIMING,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        synchronous_mode_strict: true,
        // A crashed primary is failed over at once rather than restarted in place for up to 300 s.
        master_start_timeout: 0,
        postgresql: {
          use_pg_rewind: true,
          remove_data_directory_on_rewind_failure: true,
          use_slots: true,
          parameters: {
            max_connections: 200,
            wal_level: 'replica',
            hot_standby: 'on',
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_log_hints: 'on',
            // The machine does not crash in a drill, only processes: no fsync (full_page_writes stays, pg_rewind needs it).
            fsync: 'off',
            shared_buffers: '32MB',
            // A standby whose upstream is gone tries again this often (5 s by default): after a
            // failover, the new primary's commits wait (strict) until a standby streams from it.
            wal_retrieve_retry_interval: '500ms',
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
      pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust', ...lab],
    },
    postgresql: {
      listen: `${host}:${n.pgPort}`,
      connect_address: `${host}:${n.pgPort}`,
      data_dir: n.dataDir,
      bin_dir: binDir,
      pgpass: path.join(n.dir, 'pgpass'),
      authentication: {
        superuser: { username: 'postgres', password: 'postgres' },
        replication: { username: 'replicator', password: 'replicator' },
        rewind: { username: 'postgres', password: 'postgres' },
      },
      parameters: { unix_socket_directories: n.dir },
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
}

/**
 * HAProxy in TCP mode: one listener sending to the node whose Patroni answers 200 on /primary,
 * checked every 500 ms, a node marked down every 200 ms (OPTIONS: Patroni answers the status
 * without a body, which HAProxy would cut off mid-write); a node marked down has its connections cut (on-marked-down
 * shutdown-sessions), so no client stays on a demoted primary.
 */
export function haproxyConfig(port: number, nodes: PgNode[], statsSocket?: string): string {
  return [
    'global',
    '  maxconn 1000',
    // Where the drill reads each server's state (`show stat`): a switchover resumes the moment the new primary is up.
    ...(statsSocket ? [`  stats socket ${statsSocket} mode 600 level user`] : []),
    'defaults',
    '  mode tcp',
    // A refused connection (the primary just died, not yet marked down) fails at once rather than
    // being tried again a second later: PgBouncer, then the service, learn it now and answer 503
    // within the gateway's bound instead of waiting on HAProxy.
    '  retries 0',
    '  timeout connect 1s',
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 1s',
    'listen primary',
    `  bind 127.0.0.1:${port}`,
    '  option httpchk OPTIONS /primary',
    '  http-check expect status 200',
    // A server that is down (a standby) is checked every 200 ms: a new primary is sent to soon after its promotion.
    '  default-server inter 500ms downinter 200ms fall 2 rise 1 on-marked-down shutdown-sessions',
    ...nodes.map((n) => `  server ${n.name} ${n.host ?? LOOPBACK}:${n.pgPort} maxconn 300 check port ${n.apiPort}`),
    '',
  ].join('\n');
}

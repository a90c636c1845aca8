/**
 * Postgres for the cluster: a database (fresh by default), one login role per service whose
 * search_path is the service's schema (what PG_SEARCH_PATH=role reads behind PgBouncer in
 * transaction mode, docs/deploy.md "Postgres"), and PgBouncer in front of it as a child process
 * with its own configuration in a temporary directory.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort, startProgram, waitFor, type Child } from './processes.js';

export const PGBOUNCER = process.env.PGBOUNCER_BIN || '/usr/sbin/pgbouncer';

/** The services that own a schema (the gateway has none), each schema named as its service. */
export const SCHEMA_OWNERS = ['players', 'wallet', 'chests', 'collections', 'egress', 'store'] as const;
export type SchemaOwner = (typeof SCHEMA_OWNERS)[number];

export interface ClusterDatabase {
  /** The database's name. */
  name: string;
  /** True when it was created for this cluster (and is dropped with it). */
  created: boolean;
  /** Superuser URL to the database, directly (no PgBouncer): for checks and clean-up. */
  adminUrl: string;
  /** Each service's role. */
  roles: Record<SchemaOwner, string>;
  /** Each service's direct URL (its role, no PgBouncer): what migrations use. */
  directUrl(service: SchemaOwner): string;
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

function withDatabase(url: string, database: string, user?: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  if (user !== undefined) {
    u.username = user;
    u.password = '';
  }
  return u.toString();
}

/**
 * Creates the database (unless `useExisting`) and the six roles: LOGIN, CREATE and CONNECT on
 * the database, `ALTER ROLE … SET search_path = <schema>`. Roles are named after the database
 * so that two clusters on one Postgres do not share them.
 */
export async function prepareDatabase(baseUrl: string, useExisting: boolean): Promise<ClusterDatabase> {
  const base = new URL(baseUrl);
  const existing = decodeURIComponent(base.pathname.slice(1)) || 'postgres';
  const name = useExisting ? existing : `ccs_cluster_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    if (!useExisting) await admin.query(`CREATE DATABASE ${ident(name)}`);
    const prefix = useExisting ? 'ccs' : name;
    const roles = Object.fromEntries(SCHEMA_OWNERS.map((s) => [s, `${prefix}_${s}`])) as Record<SchemaOwner, string>;
    for (const service of SCHEMA_OWNERS) {
      const role = roles[service];
      const found = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      if (!found.rowCount) await admin.query(`CREATE ROLE ${ident(role)} LOGIN`);
      await admin.query(`GRANT CREATE, CONNECT ON DATABASE ${ident(name)} TO ${ident(role)}`);
      await admin.query(`ALTER ROLE ${ident(role)} SET search_path = ${ident(service)}`);
    }
    // Tables players kept move to their service's schema in that service's migration (egress's
    // 0001: the webhook tables; chests' 0021: studio_chest_grants; ALTER TABLE players.… SET
    // SCHEMA): only the tables' owner may, so egress's and chests' roles are members of players'.
    // Without it: "permission denied for schema players".
    await admin.query(`GRANT ${ident(roles.players)} TO ${ident(roles.egress)}`);
    await admin.query(`GRANT ${ident(roles.players)} TO ${ident(roles.chests)}`);
    return {
      name,
      created: !useExisting,
      adminUrl: withDatabase(baseUrl, name),
      roles,
      directUrl: (service) => withDatabase(baseUrl, name, roles[service]),
    };
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Drops a database made for a cluster, and its roles (after closing what still connects). */
export async function dropDatabase(baseUrl: string, db: ClusterDatabase): Promise<void> {
  if (!db.created) return;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]);
    await admin.query(`DROP DATABASE IF EXISTS ${ident(db.name)}`);
    for (const role of Object.values(db.roles)) await admin.query(`DROP ROLE IF EXISTS ${ident(role)}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

export interface Bouncer {
  port: number;
  configFile: string;
  /** A service's URL through PgBouncer (its role). */
  url(service: SchemaOwner): string;
}

/** Seconds a query waits in PgBouncer's queue for a server connection before it fails (query_wait_timeout). */
export const QUERY_WAIT_TIMEOUT_S = 2;

/** PgBouncer's settings: transaction pooling, trust (the local Postgres trusts loopback), one pool per role. */
export function pgbouncerConfig(opts: { port: number; dir: string; pgHost: string; pgPort: number; database: string; poolSize: number }): string {
  return [
    '[databases]',
    `${opts.database} = host=${opts.pgHost} port=${opts.pgPort} dbname=${opts.database}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${opts.port}`,
    // No Unix socket: several clusters (and a system PgBouncer) must not collide on /tmp/.s.PGSQL.6432.
    'unix_socket_dir =',
    'auth_type = trust',
    // The admin console (database pgbouncer) for postgres: PAUSE and RESUME around a planned switchover.
    'admin_users = postgres',
    `auth_file = ${path.join(opts.dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${opts.poolSize}`,
    'max_client_conn = 1000',
    'ignore_startup_parameters = extra_float_digits',
    // After a failed server login (Postgres restarting: "the database system is shutting down"), the
    // pool refuses its clients for this long before it tries again: the default, 15 s, turned a 0.3 s
    // Postgres restart into 15 s of 503s (npm run chaos -- --cluster).
    'server_login_retry = 1',
    // A query waits at most this long for a server connection, then fails (SQLSTATE 08P01: the
    // services answer 503 database_unavailable). PgBouncer 1.18 keeps its clients' queries queued
    // while it cannot log in to a new server (a lost primary, 120 s by default): a purchase in
    // flight waited past the gateway's bound (a 504) instead of being answered 503. A planned
    // PAUSE longer than this raises it for its duration (drill/patroni-faults.ts, switchover).
    `query_wait_timeout = ${QUERY_WAIT_TIMEOUT_S}`,
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
}

/**
 * Starts PgBouncer on a free loopback port in front of the database's Postgres, knowing the
 * six roles (auth_file; with auth_type trust only the names count), and waits until it answers.
 */
export async function startPgbouncer(
  dir: string,
  baseUrl: string,
  db: ClusterDatabase,
  poolSize: number,
  print: (line: string) => void,
): Promise<{ bouncer: Bouncer; child: Child }> {
  const base = new URL(baseUrl);
  const port = await freePort();
  const configFile = path.join(dir, 'pgbouncer.ini');
  writeFileSync(path.join(dir, 'userlist.txt'), [...Object.values(db.roles), 'postgres'].map((r) => `"${r}" ""\n`).join(''));
  writeFileSync(configFile, pgbouncerConfig({ port, dir, pgHost: base.hostname, pgPort: Number(base.port || 5432), database: db.name, poolSize }));
  // PgBouncer refuses to run as root: as root it switches to PGBOUNCER_USER (postgres), which must read the directory.
  if (process.getuid?.() === 0) chmodSync(dir, 0o755);
  const child = spawnPgbouncer(configFile, print);
  const bouncer: Bouncer = {
    port,
    configFile,
    url: (service) => `postgres://${encodeURIComponent(db.roles[service])}@127.0.0.1:${port}/${encodeURIComponent(db.name)}`,
  };
  await waitForPgbouncer(bouncer, child, 15_000);
  return { bouncer, child };
}

/** One PgBouncer process on a configuration written by `startPgbouncer` (again after a kill: same port). */
export function spawnPgbouncer(configFile: string, print: (line: string) => void): Child {
  const asRoot = process.getuid?.() === 0;
  const args = asRoot ? ['-u', process.env.PGBOUNCER_USER || 'postgres', configFile] : [configFile];
  return startProgram('pgbouncer', PGBOUNCER, args, print);
}

/**
 * A command on PgBouncer's admin console (`PAUSE`: every server connection closed once its
 * transaction ends, new transactions wait; `RESUME`; `SET query_wait_timeout = <s>`).
 */
export async function pgbouncerAdmin(port: number, command: 'PAUSE' | 'RESUME' | `SET query_wait_timeout = ${number}`): Promise<void> {
  const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/pgbouncer`, connectionTimeoutMillis: 5000 });
  c.on('error', () => undefined);
  await c.connect();
  try {
    await c.query(command);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** How many clients wait in PgBouncer's queues for a server connection (SHOW POOLS, cl_waiting). */
export async function pgbouncerWaiting(port: number): Promise<number> {
  const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/pgbouncer`, connectionTimeoutMillis: 5000 });
  c.on('error', () => undefined);
  await c.connect();
  try {
    const r = await c.query<{ cl_waiting: string }>('SHOW POOLS');
    return r.rows.reduce((n, row) => n + Number(row.cl_waiting), 0);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Waits until a query through PgBouncer (as players' role) answers. */
export async function waitForPgbouncer(bouncer: Bouncer, child: Child, timeoutMs: number): Promise<void> {
  await waitFor(
    'PgBouncer answers',
    async () => {
      const c = new pg.Client({ connectionString: bouncer.url('players'), connectionTimeoutMillis: 2000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    { timeoutMs, everyMs: 100, dead: () => (child.hasExited() ? `pgbouncer exited: ${child.tail().slice(-5).join(' / ')}` : undefined) },
  );
}

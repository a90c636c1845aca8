/**
 * Postgres per statement (`BENCH_STATEMENTS=1`): the stack runs against a private cluster of this
 * machine's binaries with `pg_stat_statements` loaded, each service connecting as a role named
 * after it (all superusers of the throwaway cluster; the search_path still picks the schema), so
 * every statement has an owner. The statistics are reset right before each measurement (after the
 * fixtures and the top-ups) and read right after it, once the work it left in flight settled:
 * one table per scenario and connection count, per request.
 */
import pg from 'pg';
import { startPrivatePostgres, type PrivatePostgres } from '@ccs/shared/testing';

/** The roles the processes connect as: one per service, and the floor responder's. */
export const STATEMENT_ROLES = ['players', 'wallet', 'chests', 'collections', 'egress', 'store', 'bench_floor'] as const;

/** One normalised statement over one measurement, per request of that measurement. */
export interface StatementRow {
  /** The role (service) that ran it. */
  owner: string;
  /** The normalised query, whitespace collapsed (the JSON has it whole; the markdown shortens it). */
  query: string;
  calls: number;
  callsPerRequest: number;
  totalMsPerRequest: number;
  meanMsPerCall: number;
  /** Of meanMsPerCall, the planning (each unnamed statement is planned on every call). */
  planMsPerCall: number;
  rowsPerCall: number;
  /** Shared buffers found in the cache, read from the OS and dirtied, per call. */
  hitPerCall: number;
  readPerCall: number;
  dirtiedPerCall: number;
  walBytesPerRequest: number;
}

/** The statements of one measurement. */
export interface Statements {
  requests: number;
  rows: StatementRow[];
  /** Sums over every statement, per request. */
  total: { callsPerRequest: number; totalMsPerRequest: number; walBytesPerRequest: number };
}

/**
 * The private cluster's settings: pg_stat_statements loaded, and the shared server's durability
 * (fsync, full-page writes, synchronous commit) rather than the test clusters' fsync off, so the
 * commits cost what they cost there.
 */
const SETTINGS: Record<string, string> = {
  shared_preload_libraries: "'pg_stat_statements'",
  'pg_stat_statements.track': "'top'",
  'pg_stat_statements.max': '5000',
  'pg_stat_statements.track_utility': 'on',
  // Planning counted apart from execution: a statement planned anew on every call shows it here.
  'pg_stat_statements.track_planning': 'on',
  fsync: 'on',
  full_page_writes: 'on',
  synchronous_commit: 'on',
  shared_buffers: "'128MB'",
  max_connections: '200',
};

/** Starts the cluster, creates the roles, and returns it with a database URL maker for the bench. */
export async function startStatementsCluster(): Promise<PrivatePostgres> {
  const cluster = await startPrivatePostgres({ settings: SETTINGS });
  const c = new pg.Client({ connectionString: cluster.url });
  await c.connect();
  try {
    for (const role of STATEMENT_ROLES) await c.query(`CREATE ROLE ${role} LOGIN SUPERUSER`);
  } finally {
    await c.end();
  }
  return cluster;
}

/** The database URL with another user: how each process connects as its own role. */
export function asRole(databaseUrl: string, role: string): string {
  const u = new URL(databaseUrl);
  u.username = role;
  return u.toString();
}

const round = (n: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

interface StatRow {
  owner: string;
  query: string;
  calls: string;
  total_ms: number;
  plan_ms: number;
  rows: string;
  hit: string;
  read: string;
  dirtied: string;
  wal: string;
}

/** Reads and resets pg_stat_statements for the bench database (the monitor's own queries, as `postgres`, left out). */
export class StatementMeter {
  constructor(private readonly monitor: pg.Client) {}

  async install(): Promise<void> {
    await this.monitor.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  }

  /**
   * Waits (at most 20 s) until the stack is quiet: over half a second, fewer statements than the
   * background pollers (relays, sweepers) run on their own. Before a reset, so the previous
   * measurement's and the preparation's work in flight does not count; after a measurement, so its
   * own work in flight (grants applied, messages relayed) does.
   */
  async quiet(): Promise<void> {
    const calls = async () =>
      Number(
        (
          await this.monitor.query<{ n: string }>(
            `SELECT coalesce(sum(s.calls), 0) AS n FROM pg_stat_statements s JOIN pg_roles u ON u.oid = s.userid
              WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND u.rolname <> 'postgres'`,
          )
        ).rows[0]!.n,
      );
    const deadline = Date.now() + 20_000;
    let before = await calls();
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = await calls();
      if (now - before < QUIET_CALLS) return;
      before = now;
    }
  }

  async reset(): Promise<void> {
    await this.monitor.query('SELECT pg_stat_statements_reset()');
  }

  /**
   * What ran since the last reset, per request of a measurement that sent `requests` requests (the
   * ones still in flight when the load generator stopped were served, and their statements counted).
   */
  async read(requests: number): Promise<Statements> {
    const r = await this.monitor.query<StatRow>(
      `SELECT u.rolname AS owner, s.query, s.calls, s.total_exec_time + s.total_plan_time AS total_ms, s.total_plan_time AS plan_ms, s.rows,
              s.shared_blks_hit AS hit, s.shared_blks_read AS read, s.shared_blks_dirtied AS dirtied, s.wal_bytes AS wal
         FROM pg_stat_statements s JOIN pg_roles u ON u.oid = s.userid
        WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND u.rolname <> 'postgres'
        ORDER BY total_ms DESC`,
    );
    const per = Math.max(requests, 1);
    const rows = r.rows.map((s): StatementRow => {
      const calls = Number(s.calls);
      const perCall = (v: string | number) => (calls ? Number(v) / calls : 0);
      return {
        owner: s.owner,
        query: s.query.replace(/\s+/g, ' ').trim(),
        calls,
        callsPerRequest: round(calls / per, 3),
        totalMsPerRequest: round(s.total_ms / per, 4),
        meanMsPerCall: round(perCall(s.total_ms), 4),
        planMsPerCall: round(perCall(s.plan_ms), 4),
        rowsPerCall: round(perCall(s.rows), 2),
        hitPerCall: round(perCall(s.hit), 1),
        readPerCall: round(perCall(s.read), 2),
        dirtiedPerCall: round(perCall(s.dirtied), 2),
        walBytesPerRequest: Math.round(Number(s.wal) / per),
      };
    });
    const sum = (f: (x: StatementRow) => number) => rows.reduce((a, x) => a + f(x), 0);
    return {
      requests,
      rows,
      total: {
        callsPerRequest: round(
          sum((x) => x.callsPerRequest),
          2,
        ),
        totalMsPerRequest: round(
          sum((x) => x.totalMsPerRequest),
          3,
        ),
        walBytesPerRequest: Math.round(sum((x) => x.walBytesPerRequest)),
      },
    };
  }
}

/** Statements per half second the idle stack runs on its own (each service's relay and sweepers poll). */
const QUIET_CALLS = 25;

/** How many statements each table lists in the markdown (the JSON has all). */
const SHOWN = 30;
const short = (q: string) => {
  const s = q.length > 140 ? `${q.slice(0, 137)}…` : q;
  return s.replace(/\|/g, '\\|').replace(/`/g, "'");
};
const n = (v: number, digits: number) => v.toFixed(digits);

/** The markdown section: one table per measured scenario and connection count. */
export function statementsMarkdown(measured: { scenario: string; connections: number; statements?: Statements }[]): string[] {
  const with_ = measured.filter((m) => m.statements);
  if (!with_.length) return [];
  const lines = ['', '## Postgres per statement (pg_stat_statements, BENCH_STATEMENTS=1)', ''];
  lines.push(
    'Reset right before each measurement, once the preparation, the top-ups and the previous measurement have settled, and read once the work this one left in flight settled, so background work (relays, sweepers) of those seconds counts too. Per request sent (the requests still in flight when the load generator stopped were served too); blocks are 8 KiB shared buffers per call; time is planning + execution inside Postgres (not the round trip, nor parsing, nor the WAL flush of a commit), and plan ms/call the part of it spent planning. The owner is the role the process connected as.',
  );
  for (const m of with_) {
    const s = m.statements!;
    lines.push('', `### ${m.scenario} @${m.connections}`, '');
    lines.push(
      `${s.requests.toLocaleString('en-US')} requests; per request: ${n(s.total.callsPerRequest, 2)} statements, ${n(s.total.totalMsPerRequest, 3)} ms in Postgres, ${s.total.walBytesPerRequest.toLocaleString('en-US')} WAL bytes.`,
      '',
    );
    lines.push('| owner | statement | calls/req | ms/req | ms/call | plan ms/call | rows/call | hit/call | read/call | dirtied/call | WAL B/req |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const x of s.rows.slice(0, SHOWN)) {
      lines.push(
        `| ${x.owner} | \`${short(x.query)}\` | ${n(x.callsPerRequest, 3)} | ${n(x.totalMsPerRequest, 3)} | ${n(x.meanMsPerCall, 3)} | ${n(x.planMsPerCall, 3)} | ${n(x.rowsPerCall, 1)} | ${n(x.hitPerCall, 1)} | ${n(x.readPerCall, 2)} | ${n(x.dirtiedPerCall, 2)} | ${x.walBytesPerRequest.toLocaleString('en-US')} |`,
      );
    }
    if (s.rows.length > SHOWN) lines.push('', `${s.rows.length - SHOWN} more statements in the JSON.`);
  }
  return lines;
}

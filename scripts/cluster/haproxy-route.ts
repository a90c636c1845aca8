/**
 * Where HAProxy (scripts/cluster/patroni.ts) sends new connections: each server's state from its
 * stats socket, and a wait until it sends to the primary only. A planned switchover resumes
 * PgBouncer the moment this holds.
 */
import { connect } from 'node:net';
import pg from 'pg';
import { waitFor } from './processes.js';

/** Each listed server's status in HAProxy's `primary` listener (UP, DOWN, `UP 1/2` while going down, …), from its stats socket. */
async function haproxyStatus(socket: string, names: string[]): Promise<Map<string, string>> {
  const csv = await new Promise<string>((resolve, reject) => {
    let out = '';
    const sock = connect(socket);
    sock.setTimeout(1000, () => sock.destroy(new Error('HAProxy stats socket: no answer')));
    sock.on('connect', () => sock.write('show stat\n'));
    sock.on('data', (b) => void (out += b.toString()));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
  });
  const rows = csv.split('\n').map((l) => l.split(','));
  const status = rows[0]?.indexOf('status') ?? -1;
  return new Map(rows.filter((r) => r[0] === 'primary' && names.includes(r[1]!)).map((r) => [r[1]!, r[status] ?? '']));
}

/**
 * Until HAProxy sends new connections to the primary (`name`, when given) only: its stats say
 * that server is UP and every other DOWN, and then two connections in a row through HAProxy reach
 * a primary (on `port`, when given). HAProxy starts with every server up until its checks fail
 * (`fall` of them), and marks a new primary up only at its next check.
 */
export async function waitForHaproxyRoute(o: {
  socket: string;
  url: string;
  names: string[];
  name?: string;
  port?: number;
  timeoutMs: number;
  dead: () => string | undefined;
}): Promise<void> {
  await waitFor(
    `HAProxy marks ${o.name ?? 'one server'} up, the others down`,
    async () => {
      const st = await haproxyStatus(o.socket, o.names).catch(() => new Map<string, string>());
      const up = [...st].filter(([, s]) => s === 'UP').map(([n]) => n);
      const down = [...st].filter(([, s]) => s.startsWith('DOWN')).length;
      return up.length === 1 && (o.name === undefined || up[0] === o.name) && down === st.size - 1 ? true : undefined;
    },
    { timeoutMs: o.timeoutMs, everyMs: 20, dead: o.dead },
  );
  let inARow = 0;
  await waitFor(
    `HAProxy routes to ${o.name ?? 'the primary'} only`,
    async () => {
      const c = new pg.Client({ connectionString: o.url, connectionTimeoutMillis: 2000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        const r = await c.query<{ r: boolean; port: number }>("SELECT pg_is_in_recovery() AS r, current_setting('port')::int AS port");
        inARow = !r.rows[0]!.r && (o.port === undefined || r.rows[0]!.port === o.port) ? inARow + 1 : 0;
        return inARow >= 2 ? true : undefined;
      } catch {
        inARow = 0;
        return undefined;
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    { timeoutMs: o.timeoutMs, everyMs: 50, dead: o.dead },
  );
}

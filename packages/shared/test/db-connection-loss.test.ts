import net from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError, checkout, createPool, isDatabaseUnavailable, toAppError, withClient, withTransaction } from '../src/index.js';
import { createTestDatabase, testInfra } from '../src/testing/index.js';

// Real Postgres: a client checked out of the pool loses its backend (pg_terminate_backend, as a
// restart or failover does) while it is out. Before the guard, pg emitted 'error' on a client
// with no listener and the process died ("Unhandled 'error' event … on Client instance").

/** Errors that escaped to the process while a test ran (the crash this file guards against). */
const escaped: unknown[] = [];
const onEscape = (err: unknown) => void escaped.push(err);

/** The advisory lock a 'slow-commit' row's COMMIT waits for. */
const COMMIT_LOCK = 7301;

let db: { url: string; drop(): Promise<void> };
let admin: pg.Client;
let pool: pg.Pool;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pidOf = async (c: pg.PoolClient) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const terminate = async (pid: number) => (await admin.query('SELECT pg_terminate_backend($1)', [pid])).rowCount;
/** Terminates the backend once pg_stat_activity shows it in the state `where` says (polled: no guess of how long it takes to get there). */
async function terminateWhen(pid: number, where: string) {
  while (!(await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND ${where}`, [pid])).rowCount) await sleep(20);
  await terminate(pid);
}
const rowsOf = async (tag: string) => (await admin.query('SELECT count(*)::int AS n FROM t WHERE tag = $1', [tag])).rows[0].n as number;

/** Rejects with the 503 a lost database maps to. */
async function expectUnavailable(p: Promise<unknown>) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).errors[0]).toMatchObject({ kind: 'unavailable', code: 'database_unavailable' });
  return err as AppError;
}

/** The pool hands out working clients again: a query, and a committed transaction. */
async function expectPoolWorks(tag: string) {
  expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  await withTransaction(pool, (tx) => tx.query('INSERT INTO t (tag) VALUES ($1)', [tag]));
  expect(await rowsOf(tag)).toBe(1);
}

beforeAll(async () => {
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
  db = await createTestDatabase(await testInfra());
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  await admin.query('CREATE SCHEMA s; CREATE TABLE s.t (id serial PRIMARY KEY, tag text NOT NULL)');
  // COMMIT of a row tagged 'slow-commit' runs this deferred trigger, which waits for the advisory
  // lock COMMIT_LOCK while the test holds it: the COMMIT is then in progress for as long as needed.
  await admin.query(`
    CREATE FUNCTION s.slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.tag LIKE 'slow-commit%' THEN PERFORM pg_advisory_xact_lock(${COMMIT_LOCK}); END IF; RETURN NULL; END $$;
    CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON s.t DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION s.slow_commit();
    SET search_path = s`);
  pool = createPool(db.url, 's', 3);
});

afterEach(() => {
  expect(escaped, 'an error escaped to the process').toEqual([]);
});

afterAll(async () => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
  await pool?.end();
  await admin?.end();
  await db?.drop();
});

describe('a client checked out inside withTransaction loses its backend', () => {
  it('between statements: 503 database_unavailable, nothing applied, the process lives, the pool works after', async () => {
    let pid = 0;
    const err = await expectUnavailable(
      withTransaction(pool, async (tx) => {
        pid = await pidOf(tx);
        await tx.query("INSERT INTO t (tag) VALUES ('between')");
        await terminate(pid);
        await sleep(200); // the FATAL arrives while the client is idle in the transaction
        await tx.query("INSERT INTO t (tag) VALUES ('between')");
      }),
    );
    expect(String(err.cause)).toMatch(/terminating connection due to administrator command|Connection terminated/);
    expect(await rowsOf('between')).toBe(0);
    await expectPoolWorks('after-between');
    // The broken client was destroyed, not given back: the next one has another backend.
    await withClient(pool, async (c) => expect(await pidOf(c)).not.toBe(pid));
  });

  it('during a running query: 503, nothing applied, the pool works after', async () => {
    await expectUnavailable(
      withTransaction(pool, async (tx) => {
        const pid = await pidOf(tx);
        await tx.query("INSERT INTO t (tag) VALUES ('during')");
        // Terminated once Postgres shows it running; the sleep's length is only a safety net.
        void terminateWhen(pid, "state = 'active' AND query LIKE 'SELECT pg_sleep%'");
        await tx.query('SELECT pg_sleep(300)');
      }),
    );
    expect(await rowsOf('during')).toBe(0);
    await expectPoolWorks('after-during');
  });

  it('at COMMIT: 503, and the transaction the COMMIT did not finish is not applied', async () => {
    let pid = 0;
    await admin.query('SELECT pg_advisory_lock($1)', [COMMIT_LOCK]);
    try {
      await expectUnavailable(
        withTransaction(pool, async (tx) => {
          pid = await pidOf(tx);
          await tx.query("INSERT INTO t (tag) VALUES ('slow-commit')");
          // The COMMIT below runs the deferred trigger, which waits for the lock the test holds; the
          // backend is terminated once Postgres shows the COMMIT waiting there.
          void terminateWhen(pid, "query = 'COMMIT' AND wait_event_type = 'Lock' AND wait_event = 'advisory'");
        }),
      );
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [COMMIT_LOCK]);
    }
    expect(await rowsOf('slow-commit')).toBe(0);
    await expectPoolWorks('after-commit');
  });

  it('a domain error decided before the connection broke is still the answer', async () => {
    const notFound = AppError.notFound('thing_not_found', 'No such thing.');
    const err = await withTransaction(pool, async (tx) => {
      await terminate(await pidOf(tx));
      await sleep(200);
      throw notFound;
    }).catch((e: unknown) => e);
    expect(err).toBe(notFound);
    await expectPoolWorks('after-domain-error');
  });

  it('a write that reaches a node in recovery (read-only: a failover under way) is 503, nothing applied', async () => {
    // What a standby answers; a read-only transaction fails the same way (SQLSTATE 25006).
    await expectUnavailable(
      withTransaction(pool, async (tx) => {
        await tx.query('SET TRANSACTION READ ONLY');
        await tx.query("INSERT INTO t (tag) VALUES ('read-only')");
      }),
    );
    expect(await rowsOf('read-only')).toBe(0);
    await expectPoolWorks('after-read-only');
  });

  it('an ordinary SQL error is unchanged (a bug stays a 500) and the client goes back to the pool', async () => {
    const err = await withTransaction(pool, (tx) => tx.query('SELECT * FROM no_such_table')).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(AppError);
    expect((err as { code?: string }).code).toBe('42P01');
    expect(toAppError(err).kind).toBe('internal');
    await expectPoolWorks('after-sql-error');
  });
});

describe('other guarded checkouts', () => {
  it('withClient: 503 when its backend is terminated, the pool works after', async () => {
    await expectUnavailable(
      withClient(pool, async (c) => {
        await terminate(await pidOf(c));
        await sleep(200);
        return c.query('SELECT 1');
      }),
    );
    await expectPoolWorks('after-with-client');
  });

  it('checkout: the client is guarded while out, remembers the error, and is destroyed on release', async () => {
    const out = await checkout(pool);
    const pid = await pidOf(out.client);
    await terminate(pid);
    await sleep(200);
    expect(out.lost).toBeInstanceOf(Error);
    out.release();
    out.release(); // once only; a second call does nothing
    await withClient(pool, async (c) => expect(await pidOf(c)).not.toBe(pid));
    await expectPoolWorks('after-checkout');
  });

  it('idle clients in the pool lose their backends: the next queries get new connections', async () => {
    await Promise.all([1, 2, 3].map(() => withTransaction(pool, (tx) => tx.query('SELECT pg_sleep(0.05)'))));
    expect(pool.idleCount).toBeGreaterThan(0);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    await sleep(200);
    await expectPoolWorks('after-idle-kill');
  });

  it('backends killed as fast as they start, under work: every call commits or rejects 503, nothing escapes', async () => {
    // Some kills land between a new connection's ReadyForQuery and the code that checked it out
    // (both in one chunk of the socket): the guard must be on before any continuation runs.
    const flood = createPool(db.url, 's', 4);
    let killing = true;
    const killer = (async () => {
      while (killing) {
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
        );
        await sleep(Math.random() * 10); // gaps in which some transactions can commit
      }
    })();
    const outcomes: Record<string, number> = {};
    const until = Date.now() + 2500;
    try {
      await Promise.all(
        [1, 2, 3, 4, 5, 6].map(async (w) => {
          while (Date.now() < until) {
            // Two workers use pool.query (pg-pool guards that checkout itself), the others withTransaction.
            const call =
              w > 4
                ? flood.query("INSERT INTO t (tag) VALUES ('flood')").catch((e: unknown) => Promise.reject(toAppError(e)))
                : withTransaction(flood, async (tx) => {
                    await tx.query("INSERT INTO t (tag) VALUES ('flood')");
                    return (await tx.query('SELECT 1 AS one')).rows[0].one as number;
                  });
            const r = await call.then(
              () => 'committed',
              (e: unknown) => (e instanceof AppError ? `${e.kind} ${e.code}` : `other ${String(e)}`),
            );
            outcomes[r] = (outcomes[r] ?? 0) + 1;
          }
        }),
      );
    } finally {
      killing = false;
      await killer;
    }
    // Only these two outcomes (how many of each depends on the machine's speed), and some 503s.
    for (const k of Object.keys(outcomes)) expect(['unavailable database_unavailable', 'committed'], JSON.stringify(outcomes)).toContain(k);
    expect(outcomes['unavailable database_unavailable'], JSON.stringify(outcomes)).toBeGreaterThan(0);
    // Each committed call's row is there; a 503 cut off at COMMIT may or may not have applied.
    const committed = outcomes.committed ?? 0;
    const rows = await rowsOf('flood');
    expect(rows).toBeGreaterThanOrEqual(committed);
    expect(rows).toBeLessThanOrEqual(committed + outcomes['unavailable database_unavailable']!);
    expect(escaped).toEqual([]);
    await flood.end();
    await expectPoolWorks('after-flood');
  });

  it('unreachable Postgres: checkouts reject with 503 at once and pool.query errors map to 503', async () => {
    const port = await closedPort();
    const away = createPool(`postgres://postgres@127.0.0.1:${port}/postgres`, 's', 2);
    try {
      await expectUnavailable(withTransaction(away, async () => 1));
      await expectUnavailable(withClient(away, async () => 1));
      const raw = await away.query('SELECT 1').catch((e: unknown) => e);
      expect(isDatabaseUnavailable(raw)).toBe(true);
      expect(toAppError(raw).errors[0]).toMatchObject({ kind: 'unavailable', code: 'database_unavailable' });
    } finally {
      await away.end();
    }
  });

  it('an exhausted pool past its connect timeout is 503, not 500', async () => {
    // The one connection is made with all the time a busy machine needs; only the wait for it
    // while it is held is bounded short (pg-pool reads the option at each connect).
    const small = new pg.Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 30_000 });
    small.on('error', () => undefined);
    try {
      const held = await checkout(small);
      small.options.connectionTimeoutMillis = 200;
      await expectUnavailable(withTransaction(small, async () => 1));
      held.release();
      expect(await withTransaction(small, async (tx) => (await tx.query('SELECT 1 AS one')).rows)).toEqual([{ one: 1 }]);
    } finally {
      await small.end();
    }
  });
});

describe('isDatabaseUnavailable', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    ['57P01 admin_shutdown', withCode('57P01', 'terminating connection due to administrator command')],
    ['57P02 crash_shutdown', withCode('57P02')],
    ['57P03 cannot_connect_now', withCode('57P03', 'the database system is starting up')],
    ['25006 read_only_sql_transaction', withCode('25006', 'cannot execute INSERT in a read-only transaction')],
    ['53300 too_many_connections', withCode('53300')],
    ['08006 connection_failure', withCode('08006')],
    ['08001 sqlclient_unable_to_establish_sqlconnection', withCode('08001')],
    ['ECONNREFUSED', withCode('ECONNREFUSED')],
    ['ECONNRESET', withCode('ECONNRESET')],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['pg-pool: connection timeout', new Error('Connection terminated due to connection timeout', { cause: new Error('x') })],
    ['pg-pool: timeout exceeded when trying to connect', new Error('timeout exceeded when trying to connect')],
    ['pg: not queryable', new Error('Client has encountered a connection error and is not queryable')],
    ['a refused connection to every address', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')],
    ['wrapped in a cause', new Error('outer', { cause: withCode('57P01') })],
  ])('%s → 503', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(toAppError(err).errors[0]).toMatchObject({ kind: 'unavailable', code: 'database_unavailable' });
  });

  it.each([
    ['23505 unique_violation', withCode('23505')],
    ['42P01 undefined_table', withCode('42P01')],
    ['22003 numeric_value_out_of_range', withCode('22003')],
    ['a plain bug', new TypeError('cannot read properties of undefined')],
    ['not an error', 'Connection terminated'],
    ['undefined', undefined],
  ])('%s → stays a 500', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
    expect(toAppError(err).errors[0]).toMatchObject({ kind: 'internal', code: 'internal_error' });
  });
});

/** A local port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

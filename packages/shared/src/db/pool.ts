import pg from 'pg';
import { AppError } from '../errors/app-error.js';
import { isDatabaseUnavailable } from '../errors/database.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// NUMERIC and BIGINT stay strings (exact money); INT8 counts are cast in SQL where needed.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);

/**
 * How connections get the service's schema as their search_path: `options`, the startup
 * parameter (default; a direct connection or a session-mode pooler that passes it on); `role`, the
 * connecting role's own setting (`ALTER ROLE … SET search_path = <schema>`), for poolers in
 * transaction mode such as PgBouncer, which refuse startup options.
 */
export type SearchPathSource = 'options' | 'role';

/** A pool whose connections see only the service's own schema. */
export function createPool(databaseUrl: string, schema: string, max: number, searchPath: SearchPathSource = 'options'): pg.Pool {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    ...(searchPath === 'options' ? { options: `-c search_path=${schema}` } : {}),
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    // A primary that vanishes without closing its sockets (failover, network cut) is noticed on
    // idle connections too, instead of only when a query finally times out.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  // (pool.query guards the client it checks out itself; checked-out clients: see checkout.)
  pool.on('error', () => undefined);
  return pool;
}

/** A client checked out of the pool with an 'error' listener of its own until it is released. */
export interface CheckedOutClient {
  readonly client: pg.PoolClient;
  /** The error that broke the client's connection while it was checked out, if one did. */
  readonly lost: Error | undefined;
  /**
   * Gives the client back: to the pool when healthy, destroyed (the pool opens a new one when
   * needed) when its connection broke or `err` is given. Calling it again does nothing.
   */
  release(err?: Error): void;
}

/**
 * The one way to check a client out of the pool. pg-pool removes its own 'error' listener from a
 * client while it is checked out, and an 'error' event without a listener (the server restarting,
 * pg_terminate_backend, a network cut) throws out of the socket's handler and kills the process.
 * This attaches a listener for exactly the time the client is out, remembers the error, and
 * destroys such a client on release. A pool that cannot connect (Postgres down, restarting, pool
 * exhausted past the connect timeout) rejects with 503 `database_unavailable`.
 *
 * Prefer withTransaction, withClient or pool.query, which release for you.
 */
export async function checkout(pool: pg.Pool): Promise<CheckedOutClient> {
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  // The callback form, not the promise: pg-pool hands a new client over from inside the socket's
  // data handler, which may go on to parse a FATAL (the backend killed right after its
  // ReadyForQuery) before any promise continuation runs. The callback runs at once, so the
  // listener is there before that.
  const client = await new Promise<pg.PoolClient>((resolve, reject) => {
    pool.connect((err, c) => {
      if (err || !c) return reject(asDatabaseError(err ?? new Error('pool gave no client')));
      c.on('error', onError);
      resolve(c);
    });
  });
  let released = false;
  return {
    client,
    get lost() {
      return lost;
    },
    release(err?: Error) {
      if (released) return;
      released = true;
      // release() puts pg-pool's own idle listener back synchronously, before ours goes.
      const broken = lost ?? err;
      client.release(broken ?? undefined);
      client.removeListener('error', onError);
    },
  };
}

/**
 * Runs fn with a guarded client (see checkout) and releases it, destroyed when its connection
 * broke. An error caused by a lost or unreachable database rejects as 503 `database_unavailable`.
 */
export async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const out = await checkout(pool);
  let destroy: Error | undefined;
  try {
    return await fn(out.client);
  } catch (err) {
    if (isDatabaseUnavailable(err)) destroy = err as Error;
    throw failureOf(err, out.lost);
  } finally {
    out.release(destroy);
  }
}

/**
 * Runs fn in one transaction on a guarded client (see checkout); rolls back on any error and
 * rethrows it. When the connection is lost (before or at COMMIT) it rejects with 503
 * `database_unavailable` and Postgres has rolled back whatever had not committed: a COMMIT that
 * was cut off may have been applied or not, which is for the caller's idempotency to settle.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const out = await checkout(pool);
  let destroy: Error | undefined;
  try {
    await out.client.query('BEGIN');
    let result: T;
    try {
      result = await fn(out.client);
    } catch (err) {
      if (out.lost || isDatabaseUnavailable(err)) {
        destroy = out.lost ?? (err as Error);
      } else {
        // A client whose ROLLBACK failed may still be inside the transaction: never reuse it.
        await out.client.query('ROLLBACK').catch((e: Error) => void (destroy = e));
      }
      throw err;
    }
    await out.client.query('COMMIT');
    return result;
  } catch (err) {
    if (isDatabaseUnavailable(err)) destroy ??= err as Error;
    throw failureOf(err, out.lost);
  } finally {
    out.release(destroy);
  }
}

/** A database outage as 503; typed AppErrors and every other error unchanged. */
function asDatabaseError(err: unknown): unknown {
  return !(err instanceof AppError) && isDatabaseUnavailable(err) ? AppError.databaseUnavailable(err) : err;
}

/**
 * What a guarded call rejects with: AppErrors as thrown (a 4xx decided before the connection broke
 * is still the answer), an outage as 503, and any other error too when the connection broke
 * meanwhile (it is the outage's consequence, e.g. "not queryable"), else the error unchanged.
 */
function failureOf(err: unknown, lost: Error | undefined): unknown {
  if (err instanceof AppError) return err;
  if (lost || isDatabaseUnavailable(err)) return AppError.databaseUnavailable(lost ?? err);
  return err;
}

/** True when Postgres reports a unique-constraint violation (optionally of one constraint). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * Recognising "the database is away" among the errors node-postgres and pg-pool throw: a
 * restart, a crash, a failover, a terminated backend or a network cut. Such an error says
 * nothing about the request, so it is answered 503 (retry shortly), never 500 (a bug).
 */

/** SQLSTATEs of a server that is shutting down, restarting, starting up or out of connections. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast or immediate shutdown
  '57P02', // crash_shutdown: another backend crashed, the server is resetting
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '57P04', // database_dropped
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  // read_only_sql_transaction: a write reached a node in recovery, e.g. a standby Patroni has just
  // made leader before its promotion completed (its /primary answers 200 from the leader key on),
  // or a writer endpoint still naming the old primary, demoted. Nothing was written.
  '25006',
]);

/** Network errors of the socket (refused, reset, unreachable, name lookup failed). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Messages node-postgres and pg-pool give these errors (they carry no code). */
const MESSAGES = [
  /^Connection terminated/, // "… unexpectedly", "… due to connection timeout"
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^timeout exceeded when trying to connect$/, // pg-pool: no client free within connectionTimeoutMillis
  /^timeout expired$/, // pg: connectionTimeoutMillis while connecting
];

/**
 * True when `err` means Postgres could not be reached or the connection was lost (SQLSTATE class
 * 08 or 57P0x, 53300, 25006 (a write on a node not yet or no longer primary), a socket error, pg's "Connection terminated …", a connect timeout), looking
 * through `cause` and the errors of an AggregateError (a refused connection to every address).
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string') {
    if (e.code.startsWith('08') && e.code.length === 5) return true;
    if (UNAVAILABLE_SQLSTATES.has(e.code) || NETWORK_CODES.has(e.code)) return true;
  }
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return e.cause !== undefined && isDatabaseUnavailable(e.cause, depth + 1);
}

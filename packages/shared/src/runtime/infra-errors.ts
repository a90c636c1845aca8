type Dependency = 'Postgres' | 'NATS' | 'Redis';

const START_HINT: Record<Dependency, string> = {
  Postgres:
    'start it (Debian: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start; Docker: docker compose up -d postgres) or set DATABASE_URL',
  NATS: 'start it with JetStream (nats-server -js, or docker compose up -d nats) or set NATS_URL',
  Redis: 'start it (redis-server --daemonize yes, or docker compose up -d redis) or set REDIS_URL',
};
const VARIABLE: Record<Dependency, string> = { Postgres: 'DATABASE_URL', NATS: 'NATS_URL', Redis: 'REDIS_URL' };
const SCHEMES: Record<Dependency, string[]> = {
  Postgres: ['postgres:', 'postgresql:'],
  NATS: ['nats:', 'tls:', 'ws:', 'wss:'],
  Redis: ['redis:', 'rediss:'],
};

/** The parts of a URL an error message may show (never the password). */
function partsOf(url: string): { safe: string; parsed?: URL } {
  const safe = url.replace(/\/\/[^@/]*@/, '//***@');
  try {
    return { safe, parsed: new URL(url) };
  } catch {
    return { safe };
  }
}

/**
 * Turns a connection failure into one line that says what is actually wrong and what to do: the
 * URL is malformed or of another scheme, the host is unknown, the database or the role does not
 * exist (Postgres answers, so starting it would not help), or the server is not running.
 */
export function describeInfraError(what: Dependency, url: string, err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  // NATS takes a comma-separated list of servers: the first one stands for the list here.
  const { safe, parsed } = partsOf(what === 'NATS' ? (url.split(',')[0] ?? url).trim() : url);
  const variable = VARIABLE[what];
  if (!parsed)
    return `${variable} is not a valid URL (${safe}): expected e.g. ${what === 'Postgres' ? 'postgres://user@host:5432/database' : what === 'NATS' ? 'nats://host:4222' : 'redis://host:6379'}.`;
  if (!SCHEMES[what].includes(parsed.protocol))
    return `${variable} (${safe}) is not a ${what} URL: it must start with ${SCHEMES[what].map((s) => `${s}//`).join(' or ')}.`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `Cannot reach ${what} at ${safe}: the host "${parsed.hostname}" is not known; check the host in ${variable}.`;
  if (what === 'Postgres' && code === '3D000') {
    const db = decodeURIComponent(parsed.pathname.slice(1)) || parsed.username || 'postgres';
    const user = decodeURIComponent(parsed.username) || 'postgres';
    return `Postgres at ${safe} answers, but the database "${db}" does not exist: create it (createdb -h ${parsed.hostname} -p ${parsed.port || 5432} -U ${user} ${db}) or set ${variable} to an existing database.`;
  }
  if (what === 'Postgres' && (code === '28000' || code === '28P01')) {
    const user = decodeURIComponent(parsed.username) || 'postgres';
    const why = code === '28P01' ? 'its password was refused' : message;
    return `Postgres at ${safe} answers, but refused the role "${user}" (${why}): create the role (createuser -h ${parsed.hostname} -U postgres ${user}) or fix the user and password in ${variable}.`;
  }
  const reason = code && /^E[A-Z]+$/.test(code) ? code : message;
  return `Cannot reach ${what} at ${safe} (${reason}): ${START_HINT[what]}.`;
}

/** An infrastructure dependency is missing; printed as one line, no stack trace. */
export class InfraError extends Error {
  override name = 'InfraError';
}

/** Turns a connection failure into one line that says what is down and how to start it. */
export function describeInfraError(what: 'Postgres' | 'NATS' | 'Redis', url: string, err: unknown): string {
  const safeUrl = url.replace(/\/\/[^@/]*@/, '//***@');
  const reason = (err as { code?: string; message?: string })?.code ?? (err as Error)?.message ?? String(err);
  const hint = {
    Postgres:
      'start it (Debian: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start; Docker: docker compose up -d postgres) or set DATABASE_URL',
    NATS: 'start it with JetStream (nats-server -js, or docker compose up -d nats) or set NATS_URL',
    Redis: 'start it (redis-server --daemonize yes, or docker compose up -d redis) or set REDIS_URL',
  }[what];
  return `Cannot reach ${what} at ${safeUrl} (${reason}): ${hint}.`;
}

/** An infrastructure dependency is missing; printed as one line, no stack trace. */
export class InfraError extends Error {
  override name = 'InfraError';
}

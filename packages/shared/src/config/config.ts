import { z } from 'zod';

const LOCAL_DEFAULTS = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
  NATS_URL: 'nats://127.0.0.1:4222',
  REDIS_URL: 'redis://127.0.0.1:6379',
};

/** Settings every process reads from the environment; services extend it with their own. */
export const BaseConfigSchema = z.object({
  DATABASE_URL: z.string().url().default(LOCAL_DEFAULTS.DATABASE_URL),
  NATS_URL: z.string().default(LOCAL_DEFAULTS.NATS_URL),
  REDIS_URL: z.string().default(LOCAL_DEFAULTS.REDIS_URL),
  /** Namespaces every subject, stream and durable consumer so stacks can share one NATS. */
  NATS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/, 'NATS_PREFIX may hold letters, digits, - and _ only')
    .default(''),
  /** Namespaces every Redis key. */
  REDIS_PREFIX: z.string().default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Bound on every NATS request-reply that may change something, so nothing hangs. */
  NATS_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /**
   * Bound on read-only request-replies (capped at NATS_REQUEST_TIMEOUT_MS): a read is safe to
   * retry, so a client waiting on a dying replica is answered 504 sooner.
   */
  NATS_READ_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
  /** Port of the per-service HTTP health endpoint; 0 disables it. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  PG_POOL_MAX: z.coerce.number().int().positive().default(10),
  /** `options` (startup parameter) or `role` (the role's own search_path, behind PgBouncer in transaction mode). */
  PG_SEARCH_PATH: z.enum(['options', 'role']).default('options'),
  /** Replicas of the durable grants stream: 1 on a single NATS server, 3 on a JetStream cluster. */
  JETSTREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /**
   * How long the grants stream keeps a message after every consumer acknowledged it (for
   * replays and inspection); a message some consumer has not acknowledged is kept however old.
   */
  GRANTS_KEEP_ACKED_HOURS: z.coerce.number().min(0).default(24),
  /**
   * NATS credentials (deploy/nats/nats-server.conf gives each process its own user and
   * permissions): a user and password, a token, or a `.creds` file (JWT + NKey). All unset: no
   * authentication (local development). TLS: a CA to verify the server, and a client certificate.
   */
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  NATS_TOKEN: z.string().min(1).optional(),
  NATS_CREDS: z.string().min(1).optional(),
  NATS_TLS_CA: z.string().min(1).optional(),
  NATS_TLS_CERT: z.string().min(1).optional(),
  NATS_TLS_KEY: z.string().min(1).optional(),
});
export type BaseConfig = z.infer<typeof BaseConfigSchema>;

/** Parses the environment against a schema; a bad value stops the process with one clear line. */
export function loadConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new ConfigError(`Invalid configuration:\n${lines}`);
  }
  return parsed.data;
}

/** A configuration problem the operator must fix; printed without a stack trace. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

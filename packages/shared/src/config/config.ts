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
  /**
   * Namespaces every Redis key. A prefix is its own segment: `:` is added when it does not end with
   * one (`newcomer` → `newcomer:chests:…`, not `newcomerchests:…`).
   */
  REDIS_PREFIX: z
    .string()
    .default('')
    .transform((p) => (p === '' || p.endsWith(':') ? p : `${p}:`)),
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
  /**
   * `on`: the hot statements go named (prepared once per connection, see db/prepared.ts); `off`
   * behind PgBouncer before 1.21 in transaction mode, which cannot keep them.
   */
  PG_PREPARED_STATEMENTS: z.enum(['on', 'off']).default('on'),
  /**
   * `on`: the service applies its migrations at start. `off`: it does not, for replicas behind
   * PgBouncer in transaction mode, whose migration job (`main.js --migrate-only`, or an init
   * container) reaches Postgres directly: the migrations' session advisory lock must not go
   * through a transaction pooler.
   */
  MIGRATE_ON_START: z.enum(['on', 'off']).default('on'),
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

/**
 * An optional 32-byte key setting (64 hex digits or base64) for an AtRestCipher: empty counts as
 * unset (a development key kept in the database is used then).
 */
export const AtRestKeySetting = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z
    .string()
    .refine(
      (v) => /^[0-9a-fA-F]{64}$/.test(v) || Buffer.from(v, 'base64').length === 32,
      'must be 32 bytes, as 64 hex digits or base64 (openssl rand -base64 32)',
    )
    .optional(),
);

/** How long an Idempotency-Key is remembered, in hours (1 to 30 days; 24 by default). */
export const IdempotencyKeyTtlHours = z.coerce
  .number()
  .int()
  .min(1)
  .max(24 * 30)
  .default(24);

/** Parses the environment against a schema; a bad value stops the process with one clear line. */
export function loadConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  // Unsafe secrets first: their message says what to set and how to generate it.
  const secrets = secretProblems(schema, env);
  if (secrets.length) throw new ConfigError(describeSecretProblems(secrets));
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new ConfigError(`Invalid configuration:\n${lines}`);
  }
  return parsed.data;
}

/**
 * Values this repository ships as examples or former dev defaults (compose, deploy/, docs): anyone
 * can read them, so no process accepts one as a secret, whatever NODE_ENV says.
 */
export const SHIPPED_PLACEHOLDERS: readonly string[] = [
  'CHANGE_ME',
  'demo_local_key_change_me_0000',
  'demo_local_secret_change_me_0000',
  'demo_dev_key_change_me_0000',
  'demo_dev_secret_change_me_0000',
  'dev-only-console-session-secret-change-me',
  'dev-only-password',
  'dev-only-nats-players',
  'dev-only-nats-wallet',
  'dev-only-nats-chests',
  'dev-only-nats-collections',
  'dev-only-nats-gateway',
  'dev-only-nats-admin',
];

/** Words that mark a value as a visible placeholder (as in the shipped examples). */
const PLACEHOLDER_MARKER = /change[_-]?me|dev[-_]only/i;

/** Whether a value is a shipped placeholder (or marked as one). */
export const isShippedPlaceholder = (value: string): boolean =>
  SHIPPED_PLACEHOLDERS.some((p) => p.toLowerCase() === value.toLowerCase()) || PLACEHOLDER_MARKER.test(value);

/** Settings that hold a secret: a shipped placeholder in any of them stops the process. */
export const SECRET_SETTINGS: readonly string[] = [
  'CHESTS_DEMO_API_KEY',
  'CHESTS_DEMO_SECRET_KEY',
  'CONSOLE_SESSION_KEY',
  'FAIRNESS_SEED_KEY',
  'JWT_PRIVATE_KEY',
  'NATS_PASSWORD',
  'STORE_CREDENTIALS_KEY',
  'NATS_TOKEN',
];

const GENERATE_HEX = 'generate one with `openssl rand -hex 32`';

/**
 * What NODE_ENV=production requires (when the process reads the setting): the secrets that
 * otherwise fall back to something a reader of the database could use, or to no authentication.
 * `npx tsx scripts/generate-secrets.ts` writes them all to an env file (docs/deploy.md).
 */
export const PRODUCTION_SECRETS: readonly { setting: string; isSet(env: Record<string, string | undefined>): boolean; how: string }[] = [
  {
    setting: 'FAIRNESS_SEED_KEY',
    isSet: (env) => Boolean(env.FAIRNESS_SEED_KEY),
    how: `encrypts players' server seeds at rest (else a key kept in the database is used); ${GENERATE_HEX}`,
  },
  {
    setting: 'STORE_CREDENTIALS_KEY',
    isSet: (env) => Boolean(env.STORE_CREDENTIALS_KEY),
    how: `encrypts the apps' Google service-account keys at rest (else a key kept in the database is used); ${GENERATE_HEX}`,
  },
  {
    setting: 'CONSOLE_SESSION_KEY',
    isSet: (env) => Boolean(env.CONSOLE_SESSION_KEY),
    how: `encrypts the studio console's session cookie, the same on every gateway replica; ${GENERATE_HEX}`,
  },
  {
    setting: 'JWT_PRIVATE_KEY',
    isSet: (env) => Boolean(env.JWT_PRIVATE_KEY),
    how:
      'signs access tokens (else a key kept in the database is used); generate one with ' +
      '`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` (PEM, one line with literal \\n is fine)',
  },
  {
    setting: 'NATS_PASSWORD',
    isSet: (env) => Boolean((env.NATS_USER && env.NATS_PASSWORD) || env.NATS_CREDS || env.NATS_TOKEN),
    how: `with NATS_USER, this process's NATS user (deploy/nats/nats-server.conf), or NATS_CREDS; ${GENERATE_HEX} for each user`,
  },
];

/** The settings a schema reads (the keys of its object shape). */
function settingsOf(schema: z.ZodType): Set<string> {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return new Set(shape ? Object.keys(shape) : []);
}

/**
 * Secrets a process must not start with: a shipped placeholder in any secret setting it reads,
 * and, under NODE_ENV=production, a required secret left unset. Each line says what to set and
 * how to generate it.
 */
export function secretProblems(schema: z.ZodType, env: Record<string, string | undefined>): string[] {
  const reads = settingsOf(schema);
  const lines: string[] = [];
  for (const key of SECRET_SETTINGS) {
    const value = env[key];
    if (reads.has(key) && value && isShippedPlaceholder(value.trim())) {
      lines.push(
        `  ${key}: is a placeholder shipped in this repository (anyone can read it); set a random value (${GENERATE_HEX.replace('generate one with ', '')})`,
      );
    }
  }
  if (env.NODE_ENV === 'production') {
    for (const req of PRODUCTION_SECRETS) {
      if (reads.has(req.setting) && !req.isSet(env)) lines.push(`  ${req.setting}: required when NODE_ENV=production: ${req.how}`);
    }
  }
  return lines;
}

/** The message of a process refusing its secrets (the lines of `secretProblems`). */
export const describeSecretProblems = (lines: readonly string[]): string =>
  [
    'Refusing to start with unsafe secrets:',
    ...lines,
    '  (npx tsx scripts/generate-secrets.ts writes fresh ones to an env file; docs/deploy.md)',
  ].join('\n');

/** A configuration problem the operator must fix; printed without a stack trace. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

import { availableParallelism } from 'node:os';
import { BaseConfigSchema, IdempotencyKeyTtlHours } from '@ccs/shared';
import { z } from 'zod';

/** CPUs, capped to leave one thread of libuv's pool (where argon2 runs) to everything else. */
function defaultArgon2Concurrency(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.max(1, Math.min(availableParallelism(), pool - 1));
}

/** An empty variable (`KEY=` in an env file) counts as unset. */
const unsetIfEmpty = <S extends z.ZodType>(schema: S) => z.preprocess((v) => (v === '' ? undefined : v), schema);

const Pem = z
  .string()
  // Env files often carry PEMs on one line with literal "\n".
  .transform((s) => s.replace(/\\n/g, '\n').trim())
  .refine((s) => s.startsWith('-----BEGIN '), 'must be a PEM block (-----BEGIN ...)');

/** players service settings, from the environment. */
export const PlayersConfigSchema = BaseConfigSchema.extend({
  /** Publishable key of the demo app; a random one is generated and logged once when unset. */
  CHESTS_DEMO_API_KEY: unsetIfEmpty(z.string().min(16).max(200).optional()),
  /** Secret key of the demo app (studio console, admin API); a random one is generated and logged once when unset. */
  CHESTS_DEMO_SECRET_KEY: unsetIfEmpty(z.string().min(16).max(200).optional()),
  /** ES256 (P-256) private key signing access tokens; generated and stored in the schema when unset. */
  JWT_PRIVATE_KEY: unsetIfEmpty(Pem.optional()),
  /** Its public key; derived from the private key when unset. */
  JWT_PUBLIC_KEY: unsetIfEmpty(Pem.optional()),
  JWT_ISSUER: z.string().min(1).default('collectible-chest-service'),
  JWT_AUDIENCE: z.string().min(1).default('collectible-chest-api'),
  ARGON2_MEMORY_KIB: z.coerce.number().int().min(1024).max(4_194_304).default(19_456),
  ARGON2_TIME_COST: z.coerce.number().int().min(1).max(20).default(2),
  /**
   * Password hashes and verifications running at once. argon2 runs on libuv's thread pool
   * (UV_THREADPOOL_SIZE, 4 by default): the default is the CPU count, leaving one pool thread to
   * everything else (signing, DNS, files). In a container, set it to the CPU limit.
   */
  ARGON2_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(defaultArgon2Concurrency),
  /** Credential checks that may wait for a slot; the next one gets 503 `overloaded` at once. */
  ARGON2_QUEUE_DEPTH: z.coerce.number().int().min(0).max(100_000).default(64),
  /**
   * Longest wait for a slot; past it 503 `overloaded`, nothing done. The gateway's
   * CREDENTIALS_TIMEOUT_MS must cover it plus the work and GRANT_WAIT_MS.
   */
  ARGON2_QUEUE_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  /**
   * How long after a refresh its old token may be presented again while the new one is unused
   * (a client retrying after a lost answer) and get a fresh session instead of revoking the
   * family; 0 treats every second use as reuse.
   */
  REFRESH_REUSE_GRACE_SECONDS: z.coerce.number().int().min(0).max(300).default(10),
  /** How long a registration's or guest creation's Idempotency-Key is remembered. */
  IDEMPOTENCY_KEY_TTL_HOURS: IdempotencyKeyTtlHours,
  /** How long registration waits for the wallet to apply the initial credits (read-your-writes). */
  GRANT_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(2000),
  /** A player changes a declared country at most once per this many days (docs/content.md, "Compliance"); 0 lifts the cooldown. */
  COUNTRY_CHANGE_COOLDOWN_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
}).refine((c) => !c.JWT_PUBLIC_KEY || c.JWT_PRIVATE_KEY, {
  message: 'JWT_PUBLIC_KEY needs JWT_PRIVATE_KEY',
  path: ['JWT_PUBLIC_KEY'],
});
export type PlayersConfig = z.infer<typeof PlayersConfigSchema>;

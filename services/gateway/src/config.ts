import { z } from 'zod';
import { BaseConfigSchema } from '@ccs/shared';

/** Gateway settings, from the environment. */
export const GatewayConfigSchema = BaseConfigSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /**
   * Address the API (and METRICS_PORT) listens on: loopback unless told otherwise, so a stack
   * started on a laptop is not reachable from the network. Containers set 0.0.0.0 (what they
   * publish decides who reaches it).
   */
  HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Port of a separate listener for GET /metrics; 0 serves /metrics on PORT instead. Set it where
   * PORT is public (behind an ingress), so metrics stay inside the cluster.
   */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** Absolute base of links in documents; derived from the request's Host when unset. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  RATE_LIMIT: z.enum(['on', 'off']).default('on'),
  /** Requests per minute per app and player (or address). */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(1200),
  /** Requests per minute per app and address on login, registration, refresh and guest creation. */
  RATE_LIMIT_AUTH_PER_MINUTE: z.coerce.number().int().positive().default(30),
  /**
   * Peers whose X-Forwarded-For is believed (proxy-addr syntax: addresses, CIDRs, or the presets
   * loopback, linklocal, uniquelocal). The client address is the nearest hop not in this list,
   * so a client cannot escape its rate limit by sending its own X-Forwarded-For.
   */
  TRUST_PROXY: z
    .string()
    .default('loopback,linklocal,uniquelocal')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  APIKEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * How long the gateway serves a content-only reply (catalog, odds, collections and collectibles
   * without a player) from memory; 0 turns that cache off. A content load drops the app's replies
   * at once (ContentChanged), so this bounds only how long a lost notice leaves one stale.
   */
  REPLY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(1_000),
  /**
   * How long the gateway keeps a player's purchase restrictions for the catalog's per-player flags
   * (`meta.purchasable`, …); 0 asks chests on every read. A profile change and a content load
   * clear them on every gateway at once (plugins/purchase-flags.ts), so this bounds only how long a
   * lost notice leaves them stale. The gates themselves never use it.
   */
  PURCHASE_FLAGS_TTL_MS: z.coerce.number().int().min(0).default(5_000),
  /**
   * How long the gateway keeps whether a player is locked (the studio's lock, 403 player_locked);
   * 0 asks players on every request with a token. A lock or unlock clears it on every gateway
   * before it is answered (plugins/auth.ts), so this bounds only how long a lost notice leaves it stale.
   */
  PLAYER_LOCKS_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  JWT_ISSUER: z.string().default('collectible-chest-service'),
  JWT_AUDIENCE: z.string().default('collectible-chest-api'),
  /**
   * Bound on the calls of register and login, instead of NATS_REQUEST_TIMEOUT_MS: players queues
   * their password checks (up to ARGON2_QUEUE_WAIT_MS, then 503 overloaded) and a registration
   * waits up to GRANT_WAIT_MS for its grants, so a request whose work completes gets its answer.
   */
  CREDENTIALS_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  /**
   * Bound on a store purchase's verification, instead of NATS_REQUEST_TIMEOUT_MS: the store calls
   * Google Play twice (each bounded by the store's STORE_GOOGLE_TIMEOUT_MS) and then waits up to its
   * GRANT_WAIT_MS for the grants, so a purchase that is granted gets its answer.
   */
  STORE_TIMEOUT_MS: z.coerce.number().int().positive().default(12_000),
  /**
   * The level of the gateway's one line per request (`request completed`). Unset: `info` under
   * NODE_ENV=production, where operators read those lines as the access log, and `debug` elsewhere,
   * so `npm start`'s terminal keeps what matters in view (failures are logged on their own, at
   * `warn` or `error`, whatever this says). LOG_LEVEL still decides what is written.
   */
  LOG_REQUESTS: z.enum(['info', 'debug']).optional(),
  /** Read for LOG_REQUESTS' default only (`production` in the image). */
  NODE_ENV: z.string().optional(),
  /** Bound on the readiness probe's calls to each service. */
  READY_TIMEOUT_MS: z.coerce.number().int().positive().default(1000),
  /**
   * The studio console's session secret (docs/console.md): at least 32 random characters (e.g.
   * `openssl rand -hex 32`); its SHA-256 is the key that encrypts the session cookie. Every gateway
   * replica needs the same one; unset, each process draws its own (sessions then end at a restart
   * and hold on one replica only).
   */
  CONSOLE_SESSION_KEY: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().min(32, { error: 'CONSOLE_SESSION_KEY takes at least 32 random characters (openssl rand -hex 32)' }).optional(),
  ),
  /**
   * Failed console sign-ins per client address and minute before the sign-in answers 429 with
   * Retry-After, to every attempt from that address (a right key too) until the minute is over.
   */
  CONSOLE_SIGNIN_FAILURES_PER_MINUTE: z.coerce.number().int().positive().default(10),
  /** How long a console sign-in lasts. */
  CONSOLE_SESSION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(8),
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

/** The level of the one line per request: LOG_REQUESTS, else `info` in production and `debug` elsewhere. */
export const requestLogLevel = (config: Pick<GatewayConfig, 'LOG_REQUESTS' | 'NODE_ENV'>): 'info' | 'debug' =>
  config.LOG_REQUESTS ?? (config.NODE_ENV === 'production' ? 'info' : 'debug');

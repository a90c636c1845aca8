import { AtRestKeySetting, BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

/** store service settings, from the environment (docs/store.md). */
export const StoreConfigSchema = BaseConfigSchema.extend({
  /**
   * Extra trusted roots for App Store signatures, beside Apple Root CA - G3 (which ships with the
   * service, pinned by its SHA-256 fingerprint): PEM certificates, or paths of PEM files, separated
   * by commas. For tests and for a studio's own test certificate authority; empty in production.
   */
  STORE_APPLE_ROOT_CERTS: z.string().default(''),
  /** The Google Play Developer API's base URL (a stand-in's in tests). */
  STORE_GOOGLE_API_URL: z.string().url().default('https://androidpublisher.googleapis.com'),
  /** Google's OAuth 2.0 token endpoint (JWT bearer grant for a service account). */
  STORE_GOOGLE_TOKEN_URL: z.string().url().default('https://oauth2.googleapis.com/token'),
  /** Google's public keys for the OIDC tokens Pub/Sub pushes carry (JWKS). */
  STORE_GOOGLE_OIDC_JWKS_URL: z.string().url().default('https://www.googleapis.com/oauth2/v3/certs'),
  /** One bound on every call to Google (token, purchase, order, consume): past it, 503 `store_unavailable`. */
  STORE_GOOGLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(3000),
  /**
   * Key (32 bytes, 64 hex digits or base64) that encrypts the apps' Google service-account keys at
   * rest. Unset: a key stored in the database is used, which is fine for development only
   * (required under NODE_ENV=production).
   */
  STORE_CREDENTIALS_KEY: AtRestKeySetting,
  /** How long a purchase's answer waits for the wallet and chests to apply its grants (read-your-writes); 201 regardless. */
  GRANT_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(2000),
  /** How often Google purchases granted but not yet consumed are consumed again (a failed or interrupted consume). */
  STORE_CONSUME_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(15_000),
});
export type StoreConfig = z.infer<typeof StoreConfigSchema>;

import { BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

/** egress (the webhook egress worker) settings, from the environment (docs/webhooks.md). */
export const EgressConfigSchema = BaseConfigSchema.extend({
  /**
   * One overall deadline per request: connecting, the answer's headers and the first 1 KiB of
   * its body. Past it the attempt fails with the class `timeout`.
   */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** How long a delivery is retried before it is parked: 24 h. */
  WEBHOOK_RETRY_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(7 * 86_400_000)
    .default(86_400_000),
  /** The first retry's delay; each next one doubles, up to WEBHOOK_BACKOFF_MAX_MS (±20 % jitter). */
  WEBHOOK_BACKOFF_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  WEBHOOK_BACKOFF_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
  /** How often the sender looks for due deliveries (new events and finished requests wake it at once). */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /** How long delivered deliveries (and their events) are kept for the console and the admin API: 7 days. */
  WEBHOOK_KEEP_DELIVERED_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(24 * 7),
  /** Requests in flight per replica. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * Requests in flight per app (across replicas): one app's slow or failing endpoints hold at
   * most this many slots, the others stay free for the other apps.
   */
  WEBHOOK_APP_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /**
   * The only destinations exempt from the address rules (docs/design.md §6): comma-separated exact
   * `host:port` pairs, e.g. `127.0.0.1:4000,localhost:8080`. Empty by default; for local
   * development and tests only.
   */
  WEBHOOK_ALLOW_TARGETS: z.string().default(''),
});
export type EgressConfig = z.infer<typeof EgressConfigSchema>;

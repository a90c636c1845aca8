import { BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

/** collections service settings, from the environment. */
export const CollectionsConfigSchema = BaseConfigSchema.extend({
  /** Lifetime of cached collection and collectible reads in Redis; 0 turns the cache off. */
  COLLECTIONS_CACHE_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(3600),
  /** How often the outbox relay looks for messages not yet published (duplicate conversion credits). */
  OUTBOX_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /** How long a dissolve's answer waits for the wallet to apply its token credit (read-your-writes); the credit lands anyway. */
  TRADE_CREDIT_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(3000),
  /** Age after which the trades sweeper takes over a trade step left mid-way (a crash, a lost answer of the wallet). */
  TRADE_STUCK_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** How often the trades sweeper expires offers, finishes stuck steps and retries owed refunds. */
  TRADE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5000),
});
export type CollectionsConfig = z.infer<typeof CollectionsConfigSchema>;

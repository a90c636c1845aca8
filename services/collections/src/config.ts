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
});
export type CollectionsConfig = z.infer<typeof CollectionsConfigSchema>;

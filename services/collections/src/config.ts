import { BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

/** collections service settings, from the environment. */
export const CollectionsConfigSchema = BaseConfigSchema.extend({
  /** Lifetime of cached collection and collectible reads in Redis; 0 turns the cache off. */
  COLLECTIONS_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(7 * 86_400).default(3600),
});
export type CollectionsConfig = z.infer<typeof CollectionsConfigSchema>;

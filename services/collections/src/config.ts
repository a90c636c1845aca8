import { BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

/** collections service settings, from the environment. */
export const CollectionsConfigSchema = BaseConfigSchema.extend({
  /** Lifetime of cached collection and collectible reads in Redis; 0 turns the cache off. */
  COLLECTIONS_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(7 * 86_400).default(3600),
  /** How often the outbox relay looks for messages not yet published (duplicate conversion credits). */
  OUTBOX_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /**
   * Test-only fault injection: `exit_after_grant_commit` exits the process right after a grant
   * batch that converted duplicates commits (before its credits are published and its grants acked).
   */
  COLLECTIONS_FAULT: z.enum(['exit_after_grant_commit']).optional(),
});
export type CollectionsConfig = z.infer<typeof CollectionsConfigSchema>;

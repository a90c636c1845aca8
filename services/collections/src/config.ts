import { BaseConfigSchema } from '@ccs/shared';
import type { z } from 'zod';

/** collections service settings, from the environment. */
export const CollectionsConfigSchema = BaseConfigSchema.extend({});
export type CollectionsConfig = z.infer<typeof CollectionsConfigSchema>;

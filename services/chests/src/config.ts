import { BaseConfigSchema } from '@ccs/shared';
import type { z } from 'zod';

/** chests service settings, from the environment. */
export const ChestsConfigSchema = BaseConfigSchema.extend({});
export type ChestsConfig = z.infer<typeof ChestsConfigSchema>;

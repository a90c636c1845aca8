import { BaseConfigSchema } from '@ccs/shared';
import type { z } from 'zod';

/** players service settings, from the environment. */
export const PlayersConfigSchema = BaseConfigSchema.extend({});
export type PlayersConfig = z.infer<typeof PlayersConfigSchema>;

import { BaseConfigSchema } from '@ccs/shared';
import type { z } from 'zod';

/** wallet service settings, from the environment. */
export const WalletConfigSchema = BaseConfigSchema.extend({});
export type WalletConfig = z.infer<typeof WalletConfigSchema>;

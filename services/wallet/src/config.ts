import { BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

/** wallet service settings, from the environment. */
export const WalletConfigSchema = BaseConfigSchema.extend({
  /** How long an Idempotency-Key of the credit endpoint is remembered. */
  IDEMPOTENCY_KEY_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
});
export type WalletConfig = z.infer<typeof WalletConfigSchema>;

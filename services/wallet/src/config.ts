import { BaseConfigSchema, IdempotencyKeyTtlHours } from '@ccs/shared';
import { z } from 'zod';

/** wallet service settings, from the environment. */
export const WalletConfigSchema = BaseConfigSchema.extend({
  /** How long an Idempotency-Key of the credit endpoint is remembered. */
  IDEMPOTENCY_KEY_TTL_HOURS: IdempotencyKeyTtlHours,
});
export type WalletConfig = z.infer<typeof WalletConfigSchema>;

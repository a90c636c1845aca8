import type { Pool } from '@ccs/shared';
import { type TestStack } from '../../support/stack.js';
import { registerThroughGateway } from '../../support/register.js';

export { ledgerTotals } from '../../../services/wallet/test/support/wallet-tier.js';

/** The wallet's own database pool in a running stack (for ledger assertions). */
export function walletPool(stack: TestStack): Pool {
  const svc = stack.services.wallet;
  if (!svc) throw new Error('wallet service is not running');
  return svc.deps.pool;
}

/** A registered player of the stack's demo app (or of `apiKey`'s app): id and access token. */
export const registerPlayer = (stack: TestStack, apiKey = stack.apiKey): Promise<{ id: string; token: string }> =>
  registerThroughGateway(stack, apiKey);

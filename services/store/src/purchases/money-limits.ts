import type { CallContext } from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import type { StoreSnapshot } from '../repositories/content-repo.js';
import type { VerifiedTransaction } from './verified.js';

/**
 * Spend limits counted in money (compliance.spend_limits with `money`): a purchase that would pass
 * one is refused before anything is granted. Filled in with the money limits.
 */
export async function checkMoneyLimits(
  _deps: StoreDeps,
  _appId: string,
  _playerId: string,
  _snapshot: StoreSnapshot | undefined,
  _verified: VerifiedTransaction,
  _ctx: CallContext,
): Promise<void> {}

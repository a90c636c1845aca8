import { appOf, callerOf, endpoint, GetStoreMoneySpent } from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import { moneyTotals } from '../repositories/purchases-repo.js';

/**
 * store.v1.money_spent: what the calling player paid in verified store transactions (refunded ones
 * left out) in the current UTC day and month, per currency: the spend that limits in money count,
 * which chests shows with the player's limits (GET /api/v1/players/me/limits).
 */
export function moneySpentEndpoint(deps: StoreDeps) {
  return endpoint(GetStoreMoneySpent, async (_req, ctx) => moneyTotals(deps.pool, appOf(ctx), callerOf(ctx)));
}

import { AdminWalletStats, appliedContentVersion, endpoint, messagingStats, type Pool } from '@ccs/shared';
import { balanceTotals, ledgerFlows } from '../repositories/admin-stats-repo.js';

/** Operator command: an app's balance totals per currency, its sources and sinks of the last 24 hours, and the wallet's messaging figures. */
export function adminStatsEndpoint(pool: Pool) {
  return endpoint(AdminWalletStats, async (req) => ({
    service: 'wallet',
    contentVersion: await appliedContentVersion(pool, req.appId),
    balances: await balanceTotals(pool, req.appId),
    flows: await ledgerFlows(pool, req.appId),
    messaging: await messagingStats(pool, req.appId),
  }));
}

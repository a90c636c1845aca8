import { AdminWalletStats, appliedContentVersion, endpoint, messagingStats, type Pool } from '@ccs/shared';
import { balanceTotals } from '../repositories/admin-stats-repo.js';

/** Operator command: an app's balance totals per currency and the wallet's messaging figures. */
export function adminStatsEndpoint(pool: Pool) {
  return endpoint(AdminWalletStats, async (req) => ({
    service: 'wallet',
    contentVersion: await appliedContentVersion(pool, req.appId),
    balances: await balanceTotals(pool, req.appId),
    messaging: await messagingStats(pool, req.appId),
  }));
}

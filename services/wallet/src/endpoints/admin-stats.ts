import { AdminWalletStats, contentStatsEndpoint, type Pool } from '@ccs/shared';
import { balanceTotals, ledgerFlows } from '../repositories/admin-stats-repo.js';

/** Operator command: an app's balance totals per currency and its sources and sinks of the last 24 hours, with the common figures. */
export const adminStatsEndpoint = (pool: Pool) =>
  contentStatsEndpoint(AdminWalletStats, 'wallet', pool, async (appId) => {
    const [balances, flows] = await Promise.all([balanceTotals(pool, appId), ledgerFlows(pool, appId)]);
    return { balances, flows };
  });

import { AdminCollectionsStats, appliedContentVersion, endpoint, messagingStats, type Pool } from '@ccs/shared';
import { grantFigures } from '../repositories/admin-stats-repo.js';

/** Operator command: an app's granted items and the collections service's messaging figures. */
export function adminStatsEndpoint(pool: Pool) {
  return endpoint(AdminCollectionsStats, async (req) => ({
    service: 'collections',
    contentVersion: await appliedContentVersion(pool, req.appId),
    ...(await grantFigures(pool, req.appId)),
    messaging: await messagingStats(pool, req.appId),
  }));
}

import { AdminChestsStats, appliedContentVersion, endpoint, messagingStats, type Pool } from '@ccs/shared';
import { chestFigures } from '../repositories/admin-stats-repo.js';

/** Operator command: an app's chests, openings and purchases, and the chests service's messaging figures. */
export function adminStatsEndpoint(pool: Pool) {
  return endpoint(AdminChestsStats, async (req) => ({
    service: 'chests',
    contentVersion: await appliedContentVersion(pool, req.appId),
    ...(await chestFigures(pool, req.appId)),
    messaging: await messagingStats(pool, req.appId),
  }));
}

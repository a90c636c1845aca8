import { AdminCollectionsStats, contentStatsEndpoint, type Pool } from '@ccs/shared';
import { grantFigures } from '../repositories/admin-stats-repo.js';

/** Operator command: an app's granted items, with the common figures. */
export const adminStatsEndpoint = (pool: Pool) =>
  contentStatsEndpoint(AdminCollectionsStats, 'collections', pool, (appId) => grantFigures(pool, appId));

import { AdminChestsStats, contentStatsEndpoint, type Pool } from '@ccs/shared';
import { chestFigures } from '../repositories/admin-stats-repo.js';

/** Operator command: an app's chests, openings (and hour by hour) and purchases, with the common figures. */
export const adminStatsEndpoint = (pool: Pool) => contentStatsEndpoint(AdminChestsStats, 'chests', pool, (appId) => chestFigures(pool, appId));

import { AdminPlayersStats, endpoint, messagingStats } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { appPlayerStats } from '../repositories/app-stats-repo.js';
import { playerErrors } from '../errors.js';

/** Operator command: an app's players (total, registered, guests) and players' messaging figures; 404 for an unknown app. */
export function adminStatsEndpoint(d: PlayersDeps) {
  return endpoint(AdminPlayersStats, async (req) => {
    const stats = await appPlayerStats(d.pool, req.appId);
    if (!stats) throw playerErrors.noApp(req.appId);
    return { service: 'players', ...stats, messaging: await messagingStats(d.pool, req.appId) };
  });
}

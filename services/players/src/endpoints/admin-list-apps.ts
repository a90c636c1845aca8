import { AdminListApps, endpoint } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { listApps } from '../repositories/app-stats-repo.js';

/** Operator command: every app with its content version, players and live keys. */
export function adminListAppsEndpoint(d: PlayersDeps) {
  return endpoint(AdminListApps, async () => ({ apps: await listApps(d.pool) }));
}

import { adminContentVersion, endpoint, type Pool } from '@ccs/shared';
import { appliedContentVersion } from '../repositories/admin-stats-repo.js';

/** Operator command: which content version of an app collections has applied (the admin CLI polls it after a load). */
export function adminContentVersionEndpoint(pool: Pool) {
  return endpoint(adminContentVersion('collections'), async (req) => ({ service: 'collections', contentVersion: await appliedContentVersion(pool, req.appId) }));
}

import { adminContentVersion, endpoint, type Pool } from '@ccs/shared';
import { appliedContentVersion } from '../repositories/admin-stats-repo.js';

/** Operator command: which content version of an app chests has applied (the admin CLI polls it after a load). */
export function adminContentVersionEndpoint(pool: Pool) {
  return endpoint(adminContentVersion('chests'), async (req) => ({ service: 'chests', contentVersion: await appliedContentVersion(pool, req.appId) }));
}

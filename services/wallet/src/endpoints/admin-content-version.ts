import { adminContentVersion, endpoint, type Pool } from '@ccs/shared';
import { appliedContentVersion } from '../repositories/admin-stats-repo.js';

/** Operator command: which content version of an app wallet has applied (the admin CLI polls it after a load). */
export function adminContentVersionEndpoint(pool: Pool) {
  return endpoint(adminContentVersion('wallet'), async (req) => ({ service: 'wallet', contentVersion: await appliedContentVersion(pool, req.appId) }));
}

import { appOf, endpoint, ListOddsLog } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { listOddsLog } from '../repositories/odds-log-repo.js';

/** chests.v1.odds_log: one page of the app's odds log, oldest first (public: what changed the odds, and when). */
export function oddsLogEndpoint(deps: Pick<ChestsDeps, 'pool'>) {
  return endpoint(ListOddsLog, async ({ page }, ctx) => listOddsLog(deps.pool, appOf(ctx), page));
}

import { AdminListOpenings, endpoint } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { withStoredConversions } from '../duplicates/conversions.js';
import { listOpenings } from '../repositories/openings-repo.js';

/**
 * Operator command: a player's openings with their rules version, fairness inputs, pity state and
 * the duplicate conversions collections applied (asked of collections in the app's name).
 */
export function adminListOpeningsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminListOpenings, async (req, ctx) => {
    const page = await listOpenings(deps.pool, req.appId, req.playerId, req.page);
    return { ...page, openings: await withStoredConversions(deps.bus, deps.log, page.openings, { requestId: ctx.requestId, appId: req.appId }) };
  });
}

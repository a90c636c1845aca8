import { appOf, callerOf, endpoint, ListOpenings } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { withStoredConversions } from '../duplicates/conversions.js';
import { listOpenings } from '../repositories/openings-repo.js';

/**
 * chests.v1.list_openings: the calling player's openings with their results, newest first, and
 * the duplicate conversions collections applied for them (one read-only request for the page).
 */
export function listOpeningsEndpoint(deps: ChestsDeps) {
  return endpoint(ListOpenings, async (req, ctx) => {
    const page = await listOpenings(deps.pool, appOf(ctx), callerOf(ctx), req.page);
    return { ...page, openings: await withStoredConversions(deps.bus, deps.log, page.openings, ctx) };
  });
}

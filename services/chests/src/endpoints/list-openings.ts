import { endpoint, ListOpenings } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { appOf, callerOf } from '../errors.js';
import { listOpenings } from '../repositories/openings-repo.js';

/** chests.v1.list_openings: the calling player's openings with their results, newest first. */
export function listOpeningsEndpoint(deps: ChestsDeps) {
  return endpoint(ListOpenings, async (req, ctx) => listOpenings(deps.pool, appOf(ctx), callerOf(ctx), req.page));
}

import { appOf, callerOf, endpoint, OpenChests } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { openAndGrant } from '../opening/open-and-grant.js';
import { openingKeyOf } from '../opening/replay.js';

/**
 * chests.v1.open_batch: the opening saga (openAndGrant) for up to 50 chests at once; its errors
 * point at `/data/<i>/id`. Each opening confirmed in time carries the duplicate conversions
 * collections' notice reported.
 */
export function openBatchEndpoint(deps: ChestsDeps) {
  return endpoint(OpenChests, async (req, ctx) => {
    const cmd = { appId: appOf(ctx), playerId: callerOf(ctx), chestIds: req.chestIds, kind: 'batch' as const, idempotencyKey: openingKeyOf(req) };
    return openAndGrant(deps, cmd, ctx);
  });
}

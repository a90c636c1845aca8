import { appOf, callerOf, endpoint, OpenChest } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { openAndGrant } from '../opening/open-and-grant.js';
import { openingKeyOf } from '../opening/replay.js';

/** chests.v1.open: the opening saga (openAndGrant), a batch of one; its errors name the path's chest. */
export function openChestEndpoint(deps: ChestsDeps) {
  return endpoint(OpenChest, async (req, ctx) => {
    const cmd = { appId: appOf(ctx), playerId: callerOf(ctx), chestIds: [req.chestId], kind: 'one' as const, idempotencyKey: openingKeyOf(req) };
    const { openings, replayed, granted } = await openAndGrant(deps, cmd, ctx);
    return { ...openings[0]!, replayed, granted };
  });
}

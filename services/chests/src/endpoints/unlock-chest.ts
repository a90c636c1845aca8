import { appOf, callerOf, endpoint, UnlockChest } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { skipUnlock, startUnlock } from '../opening/unlock-chest.js';

/** chests.v1.unlock: starts a time-locked chest's timer, or skips it for currency (see unlock-chest.ts). */
export function unlockChestEndpoint(deps: ChestsDeps) {
  return endpoint(UnlockChest, async ({ chestId, skipWith }, ctx) => {
    const cmd = { appId: appOf(ctx), playerId: callerOf(ctx), chestId };
    return skipWith ? skipUnlock(deps, { ...cmd, skipWith }, ctx) : startUnlock(deps, cmd);
  });
}

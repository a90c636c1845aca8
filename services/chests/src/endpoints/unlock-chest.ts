import { appOf, callerOf, endpoint, UnlockChest } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { startUnlock } from '../opening/unlock-timer.js';
import { skipUnlock } from '../payments/skip-saga.js';

/** chests.v1.unlock: starts a time-locked chest's timer, or skips it for currency (opening/unlock-timer.ts, payments/skip-saga.ts). */
export function unlockChestEndpoint(deps: ChestsDeps) {
  return endpoint(UnlockChest, async ({ chestId, skipWith }, ctx) => {
    const cmd = { appId: appOf(ctx), playerId: callerOf(ctx), chestId };
    return skipWith ? skipUnlock(deps, { ...cmd, skipWith }, ctx) : startUnlock(deps, cmd);
  });
}

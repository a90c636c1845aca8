import { appOf, callerOf, endpoint, PurchaseChests } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { runPurchase } from '../payments/purchase-saga.js';

/** chests.v1.purchase: buys chests for the calling player (the purchase saga). */
export function purchaseChestsEndpoint(deps: ChestsDeps) {
  return endpoint(PurchaseChests, async (req, ctx) => runPurchase(deps, { appId: appOf(ctx), playerId: callerOf(ctx), ...req }, ctx));
}

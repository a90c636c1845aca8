import { appOf, callerOf, endpoint, VerifyStorePurchase, type CallContext } from '@ccs/shared';
import type { AppleTrust } from '../apple/index.js';
import type { StoreDeps } from '../deps.js';
import type { GooglePlay } from '../google/index.js';
import { verifyApplePurchase } from '../purchases/apple-purchase.js';
import { consumeSoon } from '../purchases/consume.js';
import { grantVerified } from '../purchases/grant-purchase.js';
import { verifyGooglePurchase } from '../purchases/google-purchase.js';
import { checkMoneyLimits } from '../purchases/money-limits.js';

/**
 * store.v1.verify_purchase (POST /api/v1/players/me/store/purchases): verifies the caller's App
 * Store transaction or Google Play purchase, then grants what its product gives exactly once
 * (purchases/grant-purchase.ts), unless a spend limit in money refuses it (purchases/money-limits.ts).
 * A Google purchase is consumed once granted.
 */
export function verifyPurchaseEndpoint(deps: StoreDeps, apple: AppleTrust, google: GooglePlay) {
  return endpoint(VerifyStorePurchase, async (req, ctx: CallContext) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const snapshot = await deps.content.current(appId);
    const verified =
      req.platform === 'apple'
        ? await verifyApplePurchase(apple, snapshot?.store, req.signedTransaction, playerId)
        : await verifyGooglePurchase(deps, google, appId, snapshot?.store, req, playerId);
    const guard = await checkMoneyLimits(deps, appId, playerId, snapshot, verified, ctx);
    const reply = await grantVerified(deps, appId, playerId, verified, ctx, guard);
    if (verified.platform === 'google') consumeSoon(deps, google, appId, reply.purchase.id);
    return reply;
  });
}

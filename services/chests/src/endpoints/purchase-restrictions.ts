import { appOf, callerOf, endpoint, GetPurchaseRestrictions } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { catalogVersion } from '../cache/content-version.js';
import { refusedCurrencies } from '../compliance/gate.js';

/**
 * chests.v1.purchase_restrictions: the currencies of the current content the calling player may
 * not buy with (the compliance gates a purchase applies), and that content's version. Per player,
 * so never cached here; the catalog it decorates stays a shared, content-only read (the gateway
 * keeps each player's answer briefly, and the version lets it tell an answer from rules older
 * than a content change it heard of).
 */
export function purchaseRestrictionsEndpoint(deps: ChestsDeps) {
  return endpoint(GetPurchaseRestrictions, async (_req, ctx) => {
    const appId = appOf(ctx);
    callerOf(ctx);
    const version = await catalogVersion(deps, appId);
    // Before the content arrived the catalog is empty: nothing to restrict.
    if (version === undefined) return { refused: {}, version: 0 };
    const content = await deps.drops.content(appId, version);
    if (!content) return { refused: {}, version };
    return { refused: await refusedCurrencies(deps, content.compliance, ctx), version };
  });
}

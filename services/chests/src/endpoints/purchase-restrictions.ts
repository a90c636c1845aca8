import { appOf, callerOf, endpoint, GetPurchaseRestrictions } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { catalogVersion } from '../cache/content-version.js';
import { refusedCurrencies } from '../compliance/gate.js';

/**
 * chests.v1.purchase_restrictions: the currencies of the current content the calling player may
 * not buy with (the compliance gates a purchase applies). Per player, so never cached here or by
 * the gateway; the catalog it decorates stays a shared, content-only read.
 */
export function purchaseRestrictionsEndpoint(deps: ChestsDeps) {
  return endpoint(GetPurchaseRestrictions, async (_req, ctx) => {
    const appId = appOf(ctx);
    callerOf(ctx);
    const version = await catalogVersion(deps, appId);
    const content = version === undefined ? undefined : await deps.drops.content(appId, version);
    // Before the content arrived the catalog is empty: nothing to restrict.
    if (!content) return { refused: {} };
    return { refused: await refusedCurrencies(deps, content.compliance, ctx) };
  });
}

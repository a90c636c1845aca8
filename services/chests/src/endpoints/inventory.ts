import { appOf, callerOf, endpoint, GetInventory, InventoryAccess, type CallContext } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { countUnopenedBySource, listUnopened, summarizeUnopened } from '../repositories/inventory-repo.js';
import { catalogVersion } from '../cache/content-version.js';

/** Inventory capacity when an app's content has not arrived yet (docs/design.md §3's default). */
const DEFAULT_CAPACITY = 100;

/**
 * What the caller may see of the owner's inventory: its own always; others as players decides. A
 * call without a player is 401 (docs/design.md §3: no credentials), not players' 403 guest_forbidden.
 */
async function accessTo(deps: ChestsDeps, ownerId: string, ctx: CallContext): Promise<'full' | 'counts'> {
  if (callerOf(ctx) === ownerId) return 'full';
  const decision = await deps.bus.request(InventoryAccess, { ownerId }, ctx);
  if (decision.access === 'denied') throw chestErrors.inventoryDenied(decision.code ?? 'inventory_forbidden');
  return decision.access;
}

/**
 * chests.v1.inventory: one page of a player's unopened chests, and counts and value of the whole
 * inventory. Never cached: it changes with every opening. Three indexed queries whatever the
 * inventory's size (the page, the counts grouped by source and type, the content version).
 * The counts view (another player's public profile) holds the counts per source only. The value
 * carries every currency of the app's content, 0 where no chest held is priced in it.
 */
export function inventoryEndpoint(deps: ChestsDeps) {
  return endpoint(GetInventory, async ({ ownerId, page, order, chestTypeId }, ctx) => {
    const appId = appOf(ctx);
    const view = await accessTo(deps, ownerId, ctx);
    if (view === 'counts') {
      const bySource = await countUnopenedBySource(deps.pool, appId, ownerId);
      const totalChests = Object.values(bySource).reduce((a, b) => a + b, 0);
      return { view, playerId: ownerId, chests: [], totalChests, bySource };
    }
    const [chests, groups, version] = await Promise.all([
      listUnopened(deps.pool, appId, ownerId, { ...page, order, chestTypeId }),
      summarizeUnopened(deps.pool, appId, ownerId),
      catalogVersion(deps, appId),
    ]);
    const content = version === undefined ? undefined : await deps.drops.content(appId, version);
    const bySource = { purchased: 0, earned: 0, welcome: 0, special: 0 };
    const estimatedValue: Record<string, number> = Object.fromEntries((content?.currencies ?? []).map((code) => [code, 0]));
    let totalChests = 0;
    let matching = 0;
    for (const g of groups) {
      totalChests += g.count;
      bySource[g.source] += g.count;
      if (!chestTypeId || g.chestTypeId === chestTypeId) matching += g.count;
      for (const [code, price] of Object.entries(g.price)) estimatedValue[code] = (estimatedValue[code] ?? 0) + price * g.count;
    }
    return {
      view,
      playerId: ownerId,
      chests,
      matching,
      totalChests,
      bySource,
      estimatedValue,
      capacity: content?.inventoryCapacity ?? DEFAULT_CAPACITY,
    };
  });
}

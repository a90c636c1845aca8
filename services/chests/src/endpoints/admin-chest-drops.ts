import { AdminChestDrops, endpoint } from '@ccs/shared';
import { observedAgainstDisclosed } from '../fairness/observed-odds.js';
import type { ChestsDeps } from '../deps.js';
import { drawnItems } from '../repositories/chest-drops-repo.js';
import { chestTypeNamed } from './admin-drop-inputs.js';

/**
 * Admin API (a chest's observed drops): what the app's kept openings of a chest type drew, per
 * rarity, against the long-run shares its current rules disclose (pity included, the odds
 * endpoint's own computation), with a chi-square goodness-of-fit p-value. Reads only.
 */
export function adminChestDropsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminChestDrops, async (req) => {
    const type = await chestTypeNamed(deps, req);
    const [resolved, seen] = await Promise.all([deps.drops.resolve(req.appId, type), drawnItems(deps.pool, req.appId, type.id)]);
    const { items, rarities, chiSquarePValue } = observedAgainstDisclosed(resolved, seen);
    return {
      chestTypeId: type.id,
      chest: { slug: type.slug, name: type.name, rulesVersion: type.contentVersion },
      openings: seen.openings,
      items,
      since: seen.since?.toISOString() ?? null,
      rarities,
      chiSquarePValue,
    };
  });
}

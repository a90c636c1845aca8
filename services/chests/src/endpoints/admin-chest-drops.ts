import { AdminChestDrops, chiSquareTest, effectiveOdds, endpoint } from '@ccs/shared';
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
    const disclosed = effectiveOdds(resolved.table, resolved.content.rarities).rarities;
    const counts = new Map(seen.rarities.map((r) => [r.rarity, r.count]));
    const items = seen.rarities.reduce((n, r) => n + r.count, 0);
    const rows = disclosed.map((r) => ({ rarity: r.rarity, disclosed: r.probability, count: counts.get(r.rarity) ?? 0 }));
    // Rarities drawn that the current rules no longer have (the rules changed since).
    for (const r of seen.rarities) if (!rows.some((x) => x.rarity === r.rarity)) rows.push({ rarity: r.rarity, disclosed: 0, count: r.count });
    const test = chiSquareTest(
      rows.map((r) => r.count),
      rows.map((r) => r.disclosed),
    );
    return {
      chestTypeId: type.id,
      chest: { slug: type.slug, name: type.name, rulesVersion: type.contentVersion },
      openings: seen.openings,
      items,
      since: seen.since?.toISOString() ?? null,
      rarities: rows.map((r) => ({ ...r, observed: items ? r.count / items : 0 })),
      chiSquarePValue: items ? test.pValue : null,
    };
  });
}

import { chiSquareTest, effectiveOdds } from '@ccs/shared';
import type { ResolvedChestType } from '../opening/drop-tables.js';
import type { DrawnItems } from '../repositories/chest-drops-repo.js';

/** Per rarity: the disclosed long-run share, the count drawn and its share of the items drawn. */
export interface ObservedRarity {
  rarity: string;
  disclosed: number;
  observed: number;
  count: number;
}

/**
 * What real openings drew against what the rules disclose (pity included, the odds endpoint's own
 * computation): per rarity of the rules, then any drawn that they do not have (disclosed 0), with
 * a chi-square goodness-of-fit p-value (null before any item). One computation for the studio's
 * drops and the public observed odds.
 */
export function observedAgainstDisclosed(
  resolved: ResolvedChestType,
  seen: DrawnItems,
): { items: number; rarities: ObservedRarity[]; chiSquarePValue: number | null } {
  const disclosed = effectiveOdds(resolved.table, resolved.content.rarities).rarities;
  const counts = new Map(seen.rarities.map((r) => [r.rarity, r.count]));
  const items = seen.rarities.reduce((n, r) => n + r.count, 0);
  const rows = disclosed.map((r) => ({ rarity: r.rarity, disclosed: r.probability, count: counts.get(r.rarity) ?? 0 }));
  for (const r of seen.rarities) if (!rows.some((x) => x.rarity === r.rarity)) rows.push({ rarity: r.rarity, disclosed: 0, count: r.count });
  const test = chiSquareTest(
    rows.map((r) => r.count),
    rows.map((r) => r.disclosed),
  );
  return {
    items,
    rarities: rows.map((r) => ({ ...r, observed: items ? r.count / items : 0 })),
    chiSquarePValue: items ? test.pValue : null,
  };
}

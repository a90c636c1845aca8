import type { ChestRules } from '../contracts/content.js';
import { counterDistribution, tableAtCounter } from './pity.js';
import { buildDropTable, slotsWithin, type DropCollectible, type DropRarity, type DropTable, type RarityDistribution } from './drop-table.js';

/** The disclosed odds of a chest type, computed exactly from its drop table. */
export interface ChestOdds {
  itemsPerOpen: { min: number; max: number; expected: number };
  /** Share of each rarity among the items of one opening, and its expected count per opening. */
  rarities: { rarity: string; probability: number; expectedCount: number }[];
  /** Share of each collectible among the items of one opening. */
  collectibles: { id: string; rarity: string; probability: number }[];
}

/** Computes the exact odds of a chest type's rules (the same semantics as `roll`). */
export function odds(rules: ChestRules, rarities: readonly DropRarity[], collectibles: readonly DropCollectible[]): ChestOdds {
  return tableOdds(buildDropTable(rules, rarities, collectibles), rarities);
}

/**
 * Expected count of each rarity per opening, summed over the uniform item count, the guarantee
 * runs, the ordinary slots and each bonus weighted by its chance; probabilities are those counts
 * divided by the expected number of items, so each list sums to 1.
 */
export function tableOdds(table: DropTable, rarities: readonly DropRarity[]): ChestOdds {
  const expected = new Map<string, number>();
  const add = (dist: RarityDistribution, times: number) => {
    for (const d of dist) expected.set(d.rarity, (expected.get(d.rarity) ?? 0) + times * d.probability);
  };
  const counts = table.itemsMax - table.itemsMin + 1;
  for (let n = table.itemsMin; n <= table.itemsMax; n++) {
    let offset = 0;
    for (const g of table.guarantees) {
      add(g.distribution, slotsWithin(n, offset, g.count) / counts);
      offset += g.count;
    }
    add(table.base, Math.max(0, n - offset) / counts);
  }
  for (const b of table.bonuses) add(b.distribution, b.chance * b.count);

  const bonusExpected = table.bonuses.reduce((s, b) => s + b.chance * b.count, 0);
  const itemsPerOpen = {
    min: table.itemsMin + table.bonuses.reduce((s, b) => s + (b.chance >= 1 ? b.count : 0), 0),
    max: table.itemsMax + table.bonuses.reduce((s, b) => s + (b.chance > 0 ? b.count : 0), 0),
    expected: (table.itemsMin + table.itemsMax) / 2 + bonusExpected,
  };
  const ordered = [...rarities].filter((r) => table.pool.has(r.id)).sort((a, b) => a.rank - b.rank || a.id.localeCompare(b.id));
  return {
    itemsPerOpen,
    rarities: ordered.map((r) => {
      const e = expected.get(r.id) ?? 0;
      return { rarity: r.id, probability: e / itemsPerOpen.expected, expectedCount: e };
    }),
    collectibles: ordered.flatMap((r) => {
      const items = [...table.pool.get(r.id)!].sort((a, b) => a.id.localeCompare(b.id));
      const each = (expected.get(r.id) ?? 0) / items.length / itemsPerOpen.expected;
      return items.map((c) => ({ id: c.id, rarity: r.id, probability: each }));
    }),
  };
}

/**
 * The long-run odds of a chest with pity: its odds at each counter value, weighted by how often
 * openings are made at that value (pity.ts counterDistribution). Without pity, its plain odds.
 * Every opening has the same item count whatever the counter, so the weighting is exact.
 */
export function effectiveOdds(table: DropTable, rarities: readonly DropRarity[]): ChestOdds {
  if (!table.pity) return tableOdds(table, rarities);
  const weights = counterDistribution(table);
  const each = weights.map((w, c) => ({ w, odds: tableOdds(tableAtCounter(table, c), rarities) }));
  const first = each[0]!.odds;
  const mix = <T extends { probability: number }>(pick: (o: ChestOdds) => T[], i: number) =>
    each.reduce((s, e) => s + e.w * pick(e.odds)[i]!.probability, 0);
  return {
    itemsPerOpen: first.itemsPerOpen,
    rarities: first.rarities.map((r, i) => {
      const probability = mix((o) => o.rarities, i);
      return { rarity: r.rarity, probability, expectedCount: probability * first.itemsPerOpen.expected };
    }),
    collectibles: first.collectibles.map((c, i) => ({ id: c.id, rarity: c.rarity, probability: mix((o) => o.collectibles, i) })),
  };
}

import type { ChestRules } from '../contracts/content.js';
import { buildDropTable, type DropCollectible, type DropRarity, type DropTable, type RarityDistribution } from './drop-table.js';
import { cryptoRandom, type RandomSource } from './random.js';

/** One item of an opening: its slot (0-based, bonus items last), collectible and rarity. */
export interface RolledItem {
  slot: number;
  collectibleId: string;
  collectionId: string;
  rarity: string;
}

/** Rolls one opening of a chest from its rules (crypto-grade randomness unless one is given). */
export function roll(
  rules: ChestRules,
  rarities: readonly DropRarity[],
  collectibles: readonly DropCollectible[],
  random: RandomSource = cryptoRandom,
): RolledItem[] {
  return rollTable(buildDropTable(rules, rarities, collectibles), random);
}

/**
 * Rolls one opening from a resolved drop table: the item count uniformly in [min, max]; the
 * guarantees' slots first, then ordinary slots; then each bonus with its chance.
 */
export function rollTable(table: DropTable, random: RandomSource = cryptoRandom): RolledItem[] {
  return openingSlots(table, random).map((dist, slot) => {
    const rarity = pickRarity(dist, random());
    const candidates = table.pool.get(rarity)!;
    const c = candidates[Math.min(candidates.length - 1, Math.floor(random() * candidates.length))]!;
    return { slot, collectibleId: c.id, collectionId: c.collectionId, rarity };
  });
}

/** An opening's slots: the item count uniformly in [min, max], the guarantees' slots, ordinary slots, then each bonus with its chance (a banner's pull lays them out the same way). */
export function openingSlots(table: DropTable, random: RandomSource): RarityDistribution[] {
  const n = table.itemsMin + Math.floor(random() * (table.itemsMax - table.itemsMin + 1));
  const slots: RarityDistribution[] = [];
  for (const g of table.guarantees) for (let i = 0; i < g.count && slots.length < n; i++) slots.push(g.distribution);
  while (slots.length < n) slots.push(table.base);
  for (const b of table.bonuses) {
    if (random() < b.chance) for (let i = 0; i < b.count; i++) slots.push(b.distribution);
  }
  return slots;
}

/** The rarity whose cumulative probability interval holds u (a banner's pull draws it the same way). */
export function pickRarity(dist: RarityDistribution, u: number): string {
  let acc = 0;
  let last = dist[0]!.rarity;
  for (const d of dist) {
    if (d.probability <= 0) continue;
    acc += d.probability;
    last = d.rarity;
    if (u < acc) return d.rarity;
  }
  // Rounding can leave the sum a hair under 1: the last possible rarity takes the remainder.
  return last;
}

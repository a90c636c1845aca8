import type { DropTable, RarityDistribution, ResolvedPity } from './drop-table.js';
import { slotsWithin } from './drop-table.js';

/**
 * Pity, as one pure function of the counter, used alike by the roll, the disclosed odds, the
 * simulator and scripts/verify-opening.mjs (which restates it; docs/fairness.md):
 * - counter = openings since the last one that gave an item of the pity rarity or better;
 * - at counter >= hard - 1 the opening is guaranteed: its first slot is drawn from the rarities
 *   ranked at or above the pity rarity (a guarantee run of one slot, ahead of the chest's own);
 * - else, from soft_start on, the pity rarity's share of every slot that can give it rises by
 *   soft_step × (counter - soft_start + 1), capped at 1; the other rarities of that slot keep their
 *   proportions in what is left;
 * - after the opening the counter is 0 if an item ranked at or above the pity rarity dropped,
 *   else one more.
 */
export function tableAtCounter(table: DropTable, counter: number): DropTable {
  const pity = table.pity;
  if (!pity) return table;
  if (counter >= pity.hard - 1) return { ...table, guarantees: [{ count: 1, distribution: pity.guaranteed }, ...table.guarantees] };
  const boost = softBoost(pity, counter);
  if (boost <= 0) return table;
  const raise = (dist: RarityDistribution) => raiseShare(dist, pity.rarity, boost);
  return {
    ...table,
    base: raise(table.base),
    guarantees: table.guarantees.map((g) => ({ ...g, distribution: raise(g.distribution) })),
    bonuses: table.bonuses.map((b) => ({ ...b, distribution: raise(b.distribution) })),
  };
}

/** How much soft pity adds to the pity rarity's share at `counter` (0 before soft_start). */
export function softBoost(pity: ResolvedPity, counter: number): number {
  if (pity.softStart === undefined || pity.softStep === undefined || counter < pity.softStart) return 0;
  return pity.softStep * (counter - pity.softStart + 1);
}

/** `dist` with `rarity`'s probability raised by `boost` (capped at 1), the others scaled to fill the rest. */
function raiseShare(dist: RarityDistribution, rarity: string, boost: number): RarityDistribution {
  const own = dist.find((d) => d.rarity === rarity);
  if (!own || own.probability >= 1) return dist;
  const raised = Math.min(1, own.probability + boost);
  const scale = (1 - raised) / (1 - own.probability);
  return dist.map((d) => ({ rarity: d.rarity, probability: d.rarity === rarity ? raised : d.probability * scale }));
}

/** Whether an opening's items reset the counter (one ranked at or above the pity rarity). */
export function pityHit(table: DropTable, items: readonly { rarity: string }[]): boolean {
  const pity = table.pity;
  return !!pity && items.some((it) => (table.ranks.get(it.rarity) ?? 0) >= pity.rank);
}

/** The counter after an opening made at `counter` that gave `items`. */
export function nextCounter(table: DropTable, counter: number, items: readonly { rarity: string }[]): number {
  return pityHit(table, items) ? 0 : counter + 1;
}

/** Openings left until the guaranteed one, counting it: 1 means the next opening is guaranteed. */
export function guaranteedWithin(pity: ResolvedPity, counter: number): number {
  return Math.max(1, pity.hard - counter);
}

/** Probability that one opening made at `counter` gives an item ranked at or above the pity rarity. */
export function hitProbability(table: DropTable, counter: number): number {
  const pity = table.pity;
  if (!pity) return 0;
  const t = tableAtCounter(table, counter);
  const q = (dist: RarityDistribution) => dist.reduce((s, d) => s + ((t.ranks.get(d.rarity) ?? 0) >= pity.rank ? d.probability : 0), 0);
  const counts = t.itemsMax - t.itemsMin + 1;
  let miss = 0;
  for (let n = t.itemsMin; n <= t.itemsMax; n++) {
    let offset = 0;
    let m = 1;
    for (const g of t.guarantees) {
      m *= (1 - q(g.distribution)) ** slotsWithin(n, offset, g.count);
      offset += g.count;
    }
    m *= (1 - q(t.base)) ** Math.max(0, n - offset);
    miss += m / counts;
  }
  for (const b of t.bonuses) miss *= 1 - b.chance + b.chance * (1 - q(b.distribution)) ** b.count;
  return 1 - miss;
}

/**
 * The long-run share of openings made at each counter value 0 .. hard-1 (the stationary
 * distribution of the counter's Markov chain): what the effective odds average over.
 */
export function counterDistribution(table: DropTable): number[] {
  const pity = table.pity;
  if (!pity) return [1];
  // Reaching counter c needs c misses in a row from 0: weight(c) = prod_{k<c} (1 - hit(k)).
  const weights: number[] = [];
  let w = 1;
  for (let c = 0; c < pity.hard; c++) {
    weights.push(w);
    w *= 1 - hitProbability(table, c);
  }
  const total = weights.reduce((s, x) => s + x, 0);
  return weights.map((x) => x / total);
}

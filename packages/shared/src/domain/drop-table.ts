import type { ChestRules } from '../contracts/content.js';

/** A rarity as the drop rules need it: its id, base drop rate (default weight) and rank. */
export interface DropRarity {
  id: string;
  drop_rate: number;
  rank: number;
}

/** A collectible as the drop rules need it. */
export interface DropCollectible {
  id: string;
  collectionId: string;
  rarity: string;
}

/** A probability distribution over rarities (probabilities sum to 1). */
export type RarityDistribution = { rarity: string; probability: number }[];

/** One run of slots drawn from the same distribution. */
export interface SlotRun {
  count: number;
  distribution: RarityDistribution;
}

/**
 * A chest type's rules resolved against the app's rarities and collectibles: everything a roll
 * and the odds computation need, so both follow exactly the same semantics.
 */
export interface DropTable {
  itemsMin: number;
  itemsMax: number;
  /** Guaranteed slots in order: the first runs of slots of every opening. */
  guarantees: SlotRun[];
  /** Distribution of every slot not covered by a guarantee. */
  base: RarityDistribution;
  bonuses: { chance: number; count: number; distribution: RarityDistribution }[];
  /** The pool's collectibles per rarity (each drawn uniformly within its rarity). */
  pool: Map<string, DropCollectible[]>;
  /** Rank of every rarity of the app. */
  ranks: Map<string, number>;
  /** The chest's pity rule, resolved (absent: none). See pity.ts. */
  pity?: ResolvedPity;
}

/** A pity rule resolved against the rarities: what pity.ts needs to adjust a table. */
export interface ResolvedPity {
  rarity: string;
  /** Items of this rank or above reset the counter. */
  rank: number;
  hard: number;
  softStart?: number;
  softStep?: number;
  /** The slot distribution of a guaranteed opening's first slot: rarities ranked >= `rank`. */
  guaranteed: RarityDistribution;
}

/**
 * Resolves rules into a drop table. The pool is the union of the listed collections and
 * collectibles (each collectible once). A rarity's weight is `rules.rarity_weights[r]` or else its
 * drop rate, and only rarities with at least one collectible in the pool take part.
 */
export function buildDropTable(rules: ChestRules, rarities: readonly DropRarity[], collectibles: readonly DropCollectible[]): DropTable {
  const pool = resolvePool(rules, collectibles);
  if (pool.size === 0) throw new Error('the chest pool holds no collectible');
  const present = rarities.filter((r) => pool.has(r.id));
  const weight = (r: DropRarity) => rules.rarity_weights?.[r.id] ?? r.drop_rate;
  const base = distribution(present, weight);
  const atLeast = (minRarity: string): RarityDistribution => {
    const min = rarities.find((r) => r.id === minRarity)?.rank ?? Number.POSITIVE_INFINITY;
    const eligible = present.filter((r) => r.rank >= min);
    // A guarantee the pool cannot honour falls back to the ordinary slot distribution.
    return eligible.length ? distribution(eligible, weight) : base;
  };
  const items = rules.items;
  // A pity rule the pool cannot honour (no collectible of its rank or above; content validation
  // refuses it, this guards tables built from other input) is left out rather than misapplied.
  const pityRank = rules.pity && rarities.find((r) => r.id === rules.pity!.rarity)?.rank;
  const honourable = pityRank !== undefined && present.some((r) => r.rank >= pityRank);
  const pity = rules.pity &&
    honourable && {
      rarity: rules.pity.rarity,
      rank: rarities.find((r) => r.id === rules.pity!.rarity)?.rank ?? Number.POSITIVE_INFINITY,
      hard: rules.pity.hard,
      softStart: rules.pity.soft_start,
      softStep: rules.pity.soft_step,
      guaranteed: atLeast(rules.pity.rarity),
    };
  return {
    itemsMin: 'fixed' in items ? items.fixed : items.min,
    itemsMax: 'fixed' in items ? items.fixed : items.max,
    guarantees: (rules.guarantees ?? []).map((g) => ({ count: g.count, distribution: atLeast(g.min_rarity) })),
    base,
    bonuses: (rules.bonus ?? []).map((b) => ({ chance: b.chance, count: b.count, distribution: atLeast(b.min_rarity) })),
    pool,
    ranks: new Map(rarities.map((r) => [r.id, r.rank])),
    ...(pity ? { pity } : {}),
  };
}

/** Normalised weights; when every weight is zero the rarities are equally likely. */
function distribution(rarities: DropRarity[], weight: (r: DropRarity) => number): RarityDistribution {
  const total = rarities.reduce((s, r) => s + weight(r), 0);
  return rarities.map((r) => ({ rarity: r.id, probability: total > 0 ? weight(r) / total : 1 / rarities.length }));
}

function resolvePool(rules: ChestRules, collectibles: readonly DropCollectible[]): Map<string, DropCollectible[]> {
  const byId = new Map(collectibles.map((c) => [c.id, c]));
  const chosen = new Map<string, DropCollectible>();
  for (const p of rules.pools) {
    if ('collection' in p) for (const c of collectibles) if (c.collectionId === p.collection) chosen.set(c.id, c);
    if ('collectibles' in p) {
      for (const id of p.collectibles) {
        const c = byId.get(id);
        if (c) chosen.set(c.id, c);
      }
    }
  }
  const pool = new Map<string, DropCollectible[]>();
  for (const c of chosen.values()) pool.set(c.rarity, [...(pool.get(c.rarity) ?? []), c]);
  return pool;
}

/** How many of slots `from .. from+count-1` exist in an opening of `n` items. */
export function slotsWithin(n: number, from: number, count: number): number {
  return Math.max(0, Math.min(count, n - from));
}

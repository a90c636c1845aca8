import type { BannerContent } from '../contracts/content.js';
import type { DropCollectible, DropTable, RarityDistribution } from './drop-table.js';
import { slotsWithin } from './drop-table.js';
import { nextCounter, tableAtCounter } from './pity.js';
import type { RandomSource } from './random.js';
import { openingSlots, pickRarity, type RolledItem } from './roll.js';

/**
 * Gacha banner pulls (docs/design.md §8), as one pure function of the chest's drop table, the banner,
 * the player's standing in the banner's pity group and the fair random stream: the service, the
 * simulator and scripts/verify-opening.mjs (which restates it) agree by construction. The draw
 * order is docs/fairness.md's ("Banner pulls"):
 *
 * - a pull is one opening of the chest, rolled as roll.ts does (item count, bonuses, then per slot
 *   a number for the rarity and one for the collectible) from the table as pity sets it at the
 *   group's counter (pity.ts), except that a slot that draws the featured rarity takes one more
 *   number between the two: featured when it is below `featured.share`, or whatever it is while
 *   the guarantee holds; its collectible is then drawn uniformly from `featured.collectibles` (in
 *   the banner's order), else from the pool's other collectibles of that rarity (in draw order);
 * - with `guarantee`, an off-banner item sets the player's flag and a featured one clears it; a
 *   banner without `guarantee` neither uses nor changes the flag (it carries over untouched);
 * - a ten-pull is ten openings on ten consecutive nonces, the counter and flag carried from one to
 *   the next; with `ten_pull_floor`, when none of its items ranks at or above the floor rarity, the
 *   tenth opening's last item is re-rolled from the tenth opening's stream, continued: one number
 *   for the rarity among those ranked at or above the floor (the chest's ordinary distribution,
 *   before pity, restricted to them and renormalised), then as any slot; the flag is taken as it
 *   stood before that slot, and the counter after the opening counts the re-rolled item;
 * - each pull adds a spark point.
 */

/** What a pull needs of a banner: the featured rule, the guarantee and the ten-pull floor (collectibles named as the table's pool names them). */
export type BannerRules = Pick<BannerContent, 'featured' | 'guarantee' | 'ten_pull_floor'>;

/** A player's standing in a banner's pity group. */
export interface BannerStanding {
  /** The next item of the featured rarity is featured for certain (after an off-banner one). */
  guaranteedFeatured: boolean;
  /** Openings since the last one that gave the pity rarity or better (pity.ts); 0 without pity. */
  pity: number;
  sparkPoints: number;
}

/** One item of a banner opening: whether it is one of the featured collectibles. */
export interface BannerItem extends RolledItem {
  featured: boolean;
}

/** One opening of a pull, with what its record says (`meta.banner`, `meta.pity`). */
export interface BannerOpening {
  items: BannerItem[];
  pity: { before: number; after: number; triggered: boolean };
  /** The opening gave a featured collectible; the flag before and after it; spark points after it; the ten-pull floor re-rolled its last item. */
  banner: { featured: boolean; guaranteedBefore: boolean; guaranteedAfter: boolean; sparkPointsAfter: number; floorRerolled: boolean };
}

export interface BannerPull {
  openings: BannerOpening[];
  standing: BannerStanding;
}

/** The random stream of a pull's i-th opening (0-based): fairRandom(serverSeed, clientSeed, firstNonce + i). */
export type BannerRandomFor = (opening: number) => RandomSource;

const pickOf = <T>(list: readonly T[], u: number): T => list[Math.min(list.length - 1, Math.floor(u * list.length))]!;

/** The featured and off-banner collectibles of the featured rarity in a table's pool. */
function featuredPools(table: DropTable, banner: BannerRules): { featured: DropCollectible[]; offBanner: DropCollectible[] } {
  const ofRarity = table.pool.get(banner.featured.rarity) ?? [];
  const byId = new Map(ofRarity.map((c) => [c.id, c]));
  const listed = new Set(banner.featured.collectibles);
  return {
    featured: banner.featured.collectibles.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])),
    offBanner: ofRarity.filter((c) => !listed.has(c.id)),
  };
}

/** Draws one slot of a banner opening: rarity, then (featured rarity) the featured number, then the collectible. Returns the flag after it. */
function drawSlot(
  table: DropTable,
  banner: BannerRules,
  pools: ReturnType<typeof featuredPools>,
  dist: RarityDistribution,
  slot: number,
  guaranteed: boolean,
  random: RandomSource,
): { item: BannerItem; guaranteed: boolean } {
  const rarity = pickRarity(dist, random());
  if (rarity !== banner.featured.rarity) {
    const c = pickOf(table.pool.get(rarity)!, random());
    return { item: { slot, collectibleId: c.id, collectionId: c.collectionId, rarity, featured: false }, guaranteed };
  }
  const u = random();
  const featured = pools.featured.length > 0 && (pools.offBanner.length === 0 || (banner.guarantee && guaranteed) || u < banner.featured.share);
  const c = pickOf(featured ? pools.featured : pools.offBanner, random());
  return {
    item: { slot, collectibleId: c.id, collectionId: c.collectionId, rarity, featured },
    guaranteed: banner.guarantee ? !featured : guaranteed,
  };
}

/** One banner opening at a pity-adjusted table: its items, the flag after it, and the flag before its last slot (for the floor). */
export function rollBannerOpening(
  table: DropTable,
  banner: BannerRules,
  guaranteed: boolean,
  random: RandomSource,
): { items: BannerItem[]; guaranteedAfter: boolean; guaranteedBeforeLast: boolean } {
  const pools = featuredPools(table, banner);
  let flag = guaranteed;
  let beforeLast = guaranteed;
  const items = openingSlots(table, random).map((dist, slot) => {
    beforeLast = flag;
    const drawn = drawSlot(table, banner, pools, dist, slot, flag, random);
    flag = drawn.guaranteed;
    return drawn.item;
  });
  return { items, guaranteedAfter: flag, guaranteedBeforeLast: beforeLast };
}

/** The ten-pull floor's distribution: the ordinary one (before pity) over the rarities ranked at or above `floor`, renormalised (empty: none). */
export function floorDistribution(table: DropTable, floor: string): RarityDistribution {
  const min = table.ranks.get(floor) ?? Number.POSITIVE_INFINITY;
  const eligible = table.base.filter((d) => (table.ranks.get(d.rarity) ?? 0) >= min);
  const total = eligible.reduce((s, d) => s + d.probability, 0);
  return eligible.map((d) => ({ rarity: d.rarity, probability: total > 0 ? d.probability / total : 1 / eligible.length }));
}

/**
 * One pull of `count` (1 or 10) openings of a banner from the player's standing: opening i draws
 * from `randomFor(i)`. Returns the openings as they are recorded and the standing after them.
 */
export function pullBanner(table: DropTable, banner: BannerRules, standing: BannerStanding, count: number, randomFor: BannerRandomFor): BannerPull {
  let { guaranteedFeatured: flag, sparkPoints } = standing;
  // Without pity there is no counter: it stays 0.
  const counterAfter = (before: number, items: readonly BannerItem[]) => (table.pity ? nextCounter(table, before, items) : 0);
  let counter = table.pity ? standing.pity : 0;
  const rolled: { items: BannerItem[]; before: number; flagBefore: boolean; flagBeforeLast: boolean; random: RandomSource }[] = [];
  for (let i = 0; i < count; i++) {
    const random = randomFor(i);
    const r = rollBannerOpening(tableAtCounter(table, counter), banner, flag, random);
    rolled.push({ items: r.items, before: counter, flagBefore: flag, flagBeforeLast: r.guaranteedBeforeLast, random });
    flag = r.guaranteedAfter;
    counter = counterAfter(counter, r.items);
  }
  let rerolled = false;
  const floor = banner.ten_pull_floor;
  if (count === 10 && floor !== undefined && table.ranks.has(floor)) {
    const min = table.ranks.get(floor)!;
    const dist = floorDistribution(table, floor);
    const reached = rolled.some((o) => o.items.some((it) => (table.ranks.get(it.rarity) ?? 0) >= min));
    const last = rolled[9]!;
    if (!reached && dist.length > 0 && last.items.length > 0) {
      const slot = last.items.length - 1;
      const drawn = drawSlot(table, banner, featuredPools(table, banner), dist, slot, last.flagBeforeLast, last.random);
      last.items = [...last.items.slice(0, slot), drawn.item];
      flag = drawn.guaranteed;
      counter = counterAfter(last.before, last.items);
      rerolled = true;
    }
  }
  const hard = table.pity?.hard;
  const openings = rolled.map((o, i): BannerOpening => {
    const after = i + 1 < rolled.length ? rolled[i + 1]!.before : counter;
    const guaranteedAfter = i + 1 < rolled.length ? rolled[i + 1]!.flagBefore : flag;
    return {
      items: o.items,
      pity: { before: o.before, after, triggered: hard !== undefined && o.before >= hard - 1 },
      banner: {
        featured: o.items.some((it) => it.featured),
        guaranteedBefore: o.flagBefore,
        guaranteedAfter,
        sparkPointsAfter: sparkPoints + i + 1,
        floorRerolled: rerolled && i === 9,
      },
    };
  });
  sparkPoints += count;
  return { openings, standing: { guaranteedFeatured: flag, pity: counter, sparkPoints } };
}

/** The long-run share of featured collectibles among items of the featured rarity: `share`, or 1 / (2 − share) with the guarantee. */
export function longRunFeaturedShare(banner: BannerRules): number {
  const s = banner.featured.share;
  return banner.guarantee ? 1 / (2 - s) : s;
}

/**
 * Per opening at a pity-adjusted table: the generating functions of the number k of items of the
 * featured rarity, in total and among openings that do not reach the pity rarity ("no hit"), as
 * coefficients of k = 0 and k = 1 and as their value at x (Σ_k P(k) x^k).
 */
interface FeaturedCounts {
  total: { k0: number; k1: number; at: number };
  noHit: { k0: number; k1: number; at: number };
}

/** Products of per-slot polynomials p + q·x, kept as (k0, k1, value at x). */
class Poly {
  constructor(
    public k0 = 1,
    public k1 = 0,
    public at = 1,
  ) {}
  times(p: number, q: number, x: number): Poly {
    return new Poly(this.k0 * p, this.k1 * p + this.k0 * q, this.at * (p + q * x));
  }
  static mix(parts: { weight: number; poly: Poly }[]): Poly {
    const r = new Poly(0, 0, 0);
    for (const { weight, poly } of parts) {
      r.k0 += weight * poly.k0;
      r.k1 += weight * poly.k1;
      r.at += weight * poly.at;
    }
    return r;
  }
}

function featuredCounts(table: DropTable, banner: BannerRules, x: number): FeaturedCounts {
  const rarity = banner.featured.rarity;
  const pityRank = table.pity?.rank ?? Number.POSITIVE_INFINITY;
  const reaches = (r: string) => (table.ranks.get(r) ?? 0) >= pityRank;
  const featuredReaches = reaches(rarity);
  /** Multiplies one slot of `dist` into both generating functions. */
  const slot = (g: { total: Poly; noHit: Poly }, dist: RarityDistribution) => {
    const a = dist.find((d) => d.rarity === rarity)?.probability ?? 0;
    const h = dist.reduce((s, d) => s + (d.rarity !== rarity && reaches(d.rarity) ? d.probability : 0), 0);
    return { total: g.total.times(1 - a, a, x), noHit: g.noHit.times(1 - a - h, featuredReaches ? 0 : a, x) };
  };
  const counts = table.itemsMax - table.itemsMin + 1;
  const byCount: { weight: number; poly: { total: Poly; noHit: Poly } }[] = [];
  for (let n = table.itemsMin; n <= table.itemsMax; n++) {
    let g = { total: new Poly(), noHit: new Poly() };
    let offset = 0;
    for (const run of table.guarantees) {
      for (let i = 0; i < slotsWithin(n, offset, run.count); i++) g = slot(g, run.distribution);
      offset += run.count;
    }
    for (let i = offset; i < n; i++) g = slot(g, table.base);
    byCount.push({ weight: 1 / counts, poly: g });
  }
  let total = Poly.mix(byCount.map((p) => ({ weight: p.weight, poly: p.poly.total })));
  let noHit = Poly.mix(byCount.map((p) => ({ weight: p.weight, poly: p.poly.noHit })));
  // Each bonus happens independently: its slots multiply in with its chance.
  for (const b of table.bonuses) {
    let g = { total: new Poly(), noHit: new Poly() };
    for (let i = 0; i < b.count; i++) g = slot(g, b.distribution);
    const mixIn = (base: Poly, extra: Poly) => {
      const withIt = new Poly(base.k0 * extra.k0, base.k1 * extra.k0 + base.k0 * extra.k1, base.at * extra.at);
      return Poly.mix([
        { weight: 1 - b.chance, poly: base },
        { weight: b.chance, poly: withIt },
      ]);
    };
    total = mixIn(total, g.total);
    noHit = mixIn(noHit, g.noHit);
  }
  return { total, noHit };
}

/**
 * Expected pulls (single pulls, from `from`) until the first featured collectible, exactly: a
 * Markov chain over (pity counter, guarantee flag), absorbed at the first opening that gives a
 * featured item. Infinity when the banner can never give one.
 */
export function expectedPullsToFeatured(table: DropTable, banner: BannerRules, from: { pity?: number; guaranteedFeatured?: boolean } = {}): number {
  const s = banner.featured.share;
  const { offBanner } = featuredPools(table, banner);
  const lose = offBanner.length === 0 ? 0 : 1 - s;
  const states = table.pity ? table.pity.hard : 1;
  const next = (c: number) => Math.min(c + 1, states - 1);
  const perCounter = Array.from({ length: states }, (_, c) => featuredCounts(tableAtCounter(table, c), banner, lose));
  /**
   * Solves E(c) = k(c) + reset(c)·E(0) + stay(c)·E(next(c)) backwards as E(c) = α(c) + β(c)·E(0);
   * without pity there is one state, which both masses return to.
   */
  const solve = (k: (c: number) => number, reset: (c: number) => number, stay: (c: number) => number): number[] => {
    const alpha: number[] = [];
    const beta: number[] = [];
    const top = states - 1;
    if (!table.pity) {
      alpha[top] = k(top);
      beta[top] = reset(top) + stay(top);
    } else {
      // The top counter stays there on a miss (only when the pool cannot honour the pity).
      const loop = 1 - stay(top);
      alpha[top] = loop > 0 ? k(top) / loop : Number.POSITIVE_INFINITY;
      beta[top] = loop > 0 ? reset(top) / loop : 0;
    }
    for (let c = top - 1; c >= 0; c--) {
      alpha[c] = k(c) + stay(c) * alpha[next(c)]!;
      beta[c] = reset(c) + stay(c) * beta[next(c)]!;
    }
    const e0 = beta[0]! >= 1 ? Number.POSITIVE_INFINITY : alpha[0]! / (1 - beta[0]!);
    return alpha.map((a, c) => a + beta[c]! * e0);
  };
  const counter = Math.min(from.pity ?? 0, states - 1);
  if (!banner.guarantee) {
    // No featured item: each item of the rarity off-banner, independently (the value at 1 − share).
    const e = solve(
      () => 1,
      (c) => perCounter[c]!.total.at - perCounter[c]!.noHit.at,
      (c) => perCounter[c]!.noHit.at,
    );
    return e[counter]!;
  }
  // Guaranteed: no featured item means no item of the rarity at all.
  const guaranteed = solve(
    () => 1,
    (c) => perCounter[c]!.total.k0 - perCounter[c]!.noHit.k0,
    (c) => perCounter[c]!.noHit.k0,
  );
  if (from.guaranteedFeatured) return guaranteed[counter]!;
  // Not guaranteed: no item of the rarity keeps it so; exactly one, off-banner, sets the flag.
  const e = solve(
    (c) => 1 + lose * ((perCounter[c]!.total.k1 - perCounter[c]!.noHit.k1) * guaranteed[0]! + perCounter[c]!.noHit.k1 * guaranteed[next(c)]!),
    (c) => perCounter[c]!.total.k0 - perCounter[c]!.noHit.k0,
    (c) => perCounter[c]!.noHit.k0,
  );
  return e[counter]!;
}

/**
 * One opening of a banner pull recomputed on its own from what it recorded (the server's
 * verification of one opening): its table at the recorded pity counter, the flag it started with,
 * and, when the ten-pull floor re-rolled it, its last item drawn again from its stream continued,
 * as pullBanner does. The same draws in the same order as pullBanner's.
 */
export function recomputeBannerOpening(
  table: DropTable,
  banner: BannerRules,
  recorded: { pityBefore: number; guaranteedBefore: boolean; floorRerolled: boolean },
  random: RandomSource,
): BannerItem[] {
  const r = rollBannerOpening(tableAtCounter(table, recorded.pityBefore), banner, recorded.guaranteedBefore, random);
  const floor = banner.ten_pull_floor;
  if (!recorded.floorRerolled || floor === undefined || r.items.length === 0) return r.items;
  const slot = r.items.length - 1;
  const drawn = drawSlot(table, banner, featuredPools(table, banner), floorDistribution(table, floor), slot, r.guaranteedBeforeLast, random);
  return [...r.items.slice(0, slot), drawn.item];
}

import { chiSquareTest, type ChiSquareTest } from './chi-square.js';
import { expectedPullsToFeatured, longRunFeaturedShare, pullBanner, type BannerItem, type BannerRules, type BannerStanding } from './banner.js';
import type { DropRarity, DropTable } from './drop-table.js';
import { effectiveOdds } from './odds.js';
import type { RandomFor } from './simulate.js';

/**
 * The banner simulator (docs/design.md §8; docs/content.md, "Banners"): players pulling a banner with
 * the production pull (banner.ts), measured against what the banner discloses. Exported with the
 * chest's simulator from simulate.ts.
 */
/** What a banner simulation measures (simulateBanner). */
export interface BannerSimulationReport {
  /** Simulated players, and the single pulls each made for the shares. */
  players: number;
  pullsPerPlayer: number;
  pulls: number;
  items: number;
  /** Item rarities against the chest's disclosed long-run shares (pity included). */
  rarities: { rarity: string; count: number; observed: number; expected: number }[];
  raritiesChiSquare: ChiSquareTest;
  /**
   * Featured against off-banner among the items of the featured rarity: `disclosed` is the
   * banner's share, `longRun` what it makes with the guarantee (1 / (2 − share): a 50/50 gives
   * 2/3 featured in the long run), `observed` what the players got.
   */
  featured: {
    rarity: string;
    items: number;
    featured: number;
    offBanner: number;
    disclosed: number;
    longRun: number;
    observed: number;
    chiSquare: ChiSquareTest;
    /** Each featured collectible's count, against an equal share of the featured ones. */
    collectibles: { id: string; count: number; observed: number; expected: number }[];
    collectiblesChiSquare: ChiSquareTest;
  };
  /** Pulls to the first featured collectible from a fresh standing: exact (the Markov chain), and the players' mean. */
  firstFeatured: { withGuarantee: number; withoutGuarantee: number; simulatedMean: number; simulatedPlayers: number };
  /**
   * Pulls until a chosen featured collectible (the first listed unless said): without the spark
   * (until it drops), and with it (until it drops or the spark's cost is reached, whichever comes
   * first); `sparked` is the share of players who took it by the spark. Null without a spark.
   */
  spark: { cost: number; collectible: string; withoutSpark: number; withSpark: number; sparked: number; players: number } | null;
}

export interface BannerSimulationOptions {
  /** Players, each with a fresh standing (pity 0, no guarantee). */
  players: number;
  /**
   * Single pulls each player makes for the shares. Every player starts with no guarantee and the
   * counter at 0, so short histories read below the long run (a player's first item of the rarity
   * is a plain 50/50): few players with long histories measure the long-run shares.
   */
  pullsPerPlayer: number;
  /** Players simulated for the pulls to a featured collectible and the spark (default 1,000). */
  chasePlayers?: number;
  /** A random stream per opening (0-based across the whole run, shares first, then the first-featured and spark runs). */
  randomFor: RandomFor;
  /** The spark's cost, and the featured collectible a player wants (default: the first listed). */
  spark?: { cost: number; collectible?: string };
}

const share = (n: number, of: number) => (of ? n / of : 0);
const fresh = (): BannerStanding => ({ guaranteedFeatured: false, pity: 0, sparkPoints: 0 });
/** Pulls that stop a chase which never ends (a banner that cannot give what is chased). */
const LIMIT = 100_000;

/** Single pulls drawing their streams one after the other from `randomFor`. */
class Puller {
  private opening = 0;
  constructor(
    private readonly table: DropTable,
    private readonly banner: BannerRules,
    private readonly randomFor: RandomFor,
  ) {}

  pull(standing: BannerStanding) {
    return pullBanner(this.table, this.banner, standing, 1, () => this.randomFor(this.opening++));
  }

  /** Pulls from a fresh standing until an item satisfies `hit` (at most LIMIT): how many. */
  until(hit: (it: BannerItem) => boolean): number {
    let standing = fresh();
    for (let n = 1; n <= LIMIT; n++) {
      const pull = this.pull(standing);
      standing = pull.standing;
      if (pull.openings[0]!.items.some(hit)) return n;
    }
    return LIMIT;
  }
}

/** The shares part: `players` histories of `pullsPerPlayer` single pulls. */
function measureShares(
  puller: Puller,
  table: DropTable,
  rarities: readonly DropRarity[],
  banner: BannerRules,
  { players, pullsPerPlayer }: BannerSimulationOptions,
): Pick<BannerSimulationReport, 'items' | 'rarities' | 'raritiesChiSquare' | 'featured'> {
  const effective = effectiveOdds(table, rarities).rarities;
  const rarityIndex = new Map(effective.map((r, i) => [r.rarity, i]));
  const rarityCounts = effective.map(() => 0);
  const listed = banner.featured.collectibles.filter((id) => table.pool.get(banner.featured.rarity)?.some((c) => c.id === id));
  const featuredCounts = new Map(listed.map((id) => [id, 0]));
  let items = 0;
  let ofRarity = 0;
  for (let p = 0; p < players; p++) {
    let standing = fresh();
    for (let k = 0; k < pullsPerPlayer; k++) {
      const pull = puller.pull(standing);
      standing = pull.standing;
      for (const it of pull.openings[0]!.items) {
        items++;
        rarityCounts[rarityIndex.get(it.rarity)!]!++;
        if (it.rarity === banner.featured.rarity) ofRarity++;
        if (it.featured) featuredCounts.set(it.collectibleId, featuredCounts.get(it.collectibleId)! + 1);
      }
    }
  }
  const counts = listed.map((id) => featuredCounts.get(id)!);
  const featured = counts.reduce((s, n) => s + n, 0);
  const longRun = longRunFeaturedShare(banner);
  return {
    items,
    rarities: effective.map((r, i) => ({
      rarity: r.rarity,
      count: rarityCounts[i]!,
      observed: share(rarityCounts[i]!, items),
      expected: r.probability,
    })),
    raritiesChiSquare: chiSquareTest(
      rarityCounts,
      effective.map((r) => r.probability),
    ),
    featured: {
      rarity: banner.featured.rarity,
      items: ofRarity,
      featured,
      offBanner: ofRarity - featured,
      disclosed: banner.featured.share,
      longRun,
      observed: share(featured, ofRarity),
      chiSquare: chiSquareTest([featured, ofRarity - featured], [longRun, 1 - longRun]),
      collectibles: listed.map((id, i) => ({ id, count: counts[i]!, observed: share(counts[i]!, featured), expected: 1 / listed.length })),
      collectiblesChiSquare: chiSquareTest(
        counts,
        listed.map(() => 1 / listed.length),
      ),
    },
  };
}

/** The spark part: pulls until the chosen featured collectible drops, and the same bounded by the spark's cost. */
function measureSpark(
  puller: Puller,
  banner: BannerRules,
  spark: { cost: number; collectible?: string },
  players: number,
): BannerSimulationReport['spark'] {
  const wanted = spark.collectible ?? banner.featured.collectibles[0]!;
  let without = 0;
  let withSpark = 0;
  let sparked = 0;
  for (let p = 0; p < players; p++) {
    const n = puller.until((it) => it.featured && it.collectibleId === wanted);
    without += n;
    withSpark += Math.min(n, spark.cost);
    if (n > spark.cost) sparked++;
  }
  return {
    cost: spark.cost,
    collectible: wanted,
    withoutSpark: share(without, players),
    withSpark: share(withSpark, players),
    sparked: share(sparked, players),
    players,
  };
}

/**
 * Simulates players pulling a banner with the production pull (banner.ts): the shares their items
 * drew (rarities, featured against off-banner, each featured collectible), the pulls until their
 * first featured collectible (against the exact figure), and with a spark the pulls until a chosen
 * one. Deterministic for a deterministic `randomFor`.
 */
export function simulateBanner(
  table: DropTable,
  rarities: readonly DropRarity[],
  banner: BannerRules,
  options: BannerSimulationOptions,
): BannerSimulationReport {
  const { players, pullsPerPlayer, spark, chasePlayers = 1_000 } = options;
  const puller = new Puller(table, banner, options.randomFor);
  const shares = measureShares(puller, table, rarities, banner, options);
  let firstTotal = 0;
  for (let p = 0; p < chasePlayers; p++) firstTotal += puller.until((it) => it.featured);
  return {
    players,
    pullsPerPlayer,
    pulls: players * pullsPerPlayer,
    ...shares,
    firstFeatured: {
      withGuarantee: expectedPullsToFeatured(table, { ...banner, guarantee: true }),
      withoutGuarantee: expectedPullsToFeatured(table, { ...banner, guarantee: false }),
      simulatedMean: share(firstTotal, chasePlayers),
      simulatedPlayers: chasePlayers,
    },
    spark: spark ? measureSpark(puller, banner, spark, chasePlayers) : null,
  };
}

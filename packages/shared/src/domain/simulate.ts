import { chiSquareTest, type ChiSquareTest } from './chi-square.js';
import type { DropRarity, DropTable } from './drop-table.js';
import { effectiveOdds, tableOdds, type ChestOdds } from './odds.js';
import { hitProbability, nextCounter, tableAtCounter } from './pity.js';
import type { RandomSource } from './random.js';
import { rollTable } from './roll.js';

export { chiSquarePValue, chiSquareTest, gammaQ, type ChiSquareTest } from './chi-square.js';
/** The banner simulator (docs/design.md §8) beside the chest's: banner-simulate.ts. */
export { simulateBanner, type BannerSimulationOptions, type BannerSimulationReport } from './banner-simulate.js';

/**
 * The odds simulator (`npm run admin -- simulate`): opens a chest many times with the production
 * roll and pity code, the pity counter carried from opening to opening as for one player, and
 * compares what dropped with the disclosed odds. Per opening, exactly what an opening does:
 * `rollTable(tableAtCounter(table, counter), random)`, then `counter = nextCounter(...)`.
 */

/** Observed against disclosed shares of one rarity or collectible (shares of all items dropped). */
export interface SharesRow {
  /** The disclosed share at counter 0 (the odds document's `rarities`/`collectibles`). */
  base: number;
  /** The disclosed long-run share, pity included (effectiveOdds; equal to `base` without pity). */
  effective: number;
  /** count / items. */
  observed: number;
  count: number;
  /** effective × items. */
  expected: number;
  /** observed - effective. */
  difference: number;
  /** (count - expected) / its binomial standard deviation: beyond ±3 is unusual for one row. */
  deviation: number;
}

export interface SimulatedRarity extends SharesRow {
  rarity: string;
}

export interface SimulatedCollectible extends SharesRow {
  id: string;
  rarity: string;
}

/** How often openings made at one counter value gave the pity rarity, against hitProbability. */
export interface CounterRate {
  counter: number;
  openings: number;
  hits: number;
  observed: number;
  expected: number;
}

/** What pity did during the run. */
export interface PitySummary {
  rarity: string;
  hard: number;
  softStart: number | null;
  softStep: number | null;
  /** Openings that gave the pity rarity or better (each reset the counter). */
  hits: number;
  /** Hits made before soft pity started, in the soft window, and at the hard guarantee (counter hard - 1). */
  natural: number;
  soft: number;
  guaranteed: number;
  /** Share of hits made at the guarantee, and what the disclosed rules make it in the long run. */
  guaranteedShare: number;
  expectedGuaranteedShare: number;
  /** Openings from one hit to the next, counting the hitting one (the first counted from the start). */
  gap: { min: number; median: number; p90: number; max: number; mean: number; expectedMean: number };
  /**
   * gaps[g - 1]: hits that came g openings after the previous one, and their expected share of
   * hits. An entry with openings = hard + 1 (only when the pool cannot give the pity rarity, so
   * the guarantee cannot be honoured) counts every hit that came later than hard.
   */
  gaps: { openings: number; hits: number; share: number; expectedShare: number }[];
  /** Per counter value: openings made at it and how often they hit (an entry for `hard` counts every counter >= hard). */
  byCounter: CounterRate[];
  /** The counter after the last opening (openings since the last hit, not in `gaps`). */
  openSinceLastHit: number;
}

/** Everything one simulation run found. */
export interface SimulationReport {
  opens: number;
  items: number;
  itemsPerOpen: { min: number; max: number; expected: number; observed: number };
  rarities: SimulatedRarity[];
  collectibles: SimulatedCollectible[];
  /** Goodness of fit of the observed counts against the long-run (effective) shares. */
  chiSquare: { rarities: ChiSquareTest; collectibles: ChiSquareTest };
  pity: PitySummary | null;
}

/** A random stream per opening (0-based index across the whole run). */
export type RandomFor = (opening: number) => RandomSource;

/** A simulation that can be run in chunks (the CLI reports progress between them). */
export class OddsSimulation {
  private counter = 0;
  private opens = 0;
  private items = 0;
  private readonly base: ChestOdds;
  private readonly effective: ChestOdds;
  private readonly rarityIndex: Map<string, number>;
  private readonly collectibleIndex: Map<string, number>;
  private readonly rarityCounts: number[];
  private readonly collectibleCounts: number[];
  /** Per counter value (pity only): openings made at it, and those that hit; index `hard` takes every counter >= hard. */
  private readonly atCounter: { openings: number; hits: number }[] = [];
  private maxGap = 0;

  constructor(
    private readonly table: DropTable,
    rarities: readonly DropRarity[],
  ) {
    this.base = tableOdds(table, rarities);
    this.effective = effectiveOdds(table, rarities);
    this.rarityIndex = new Map(this.effective.rarities.map((r, i) => [r.rarity, i]));
    this.collectibleIndex = new Map(this.effective.collectibles.map((c, i) => [c.id, i]));
    this.rarityCounts = this.effective.rarities.map(() => 0);
    this.collectibleCounts = this.effective.collectibles.map(() => 0);
  }

  get done(): number {
    return this.opens;
  }

  /** Makes `opens` more openings, opening i drawing its numbers from `randomFor(i)`. */
  run(opens: number, randomFor: RandomFor): void {
    const { table } = this;
    for (let k = 0; k < opens; k++) {
      const counter = this.counter;
      const items = rollTable(tableAtCounter(table, counter), randomFor(this.opens));
      for (const it of items) {
        this.rarityCounts[this.rarityIndex.get(it.rarity)!]!++;
        this.collectibleCounts[this.collectibleIndex.get(it.collectibleId)!]!++;
      }
      this.items += items.length;
      this.counter = nextCounter(table, counter, items);
      if (table.pity) {
        const slot = (this.atCounter[Math.min(counter, table.pity.hard)] ??= { openings: 0, hits: 0 });
        slot.openings++;
        if (this.counter === 0) {
          slot.hits++;
          this.maxGap = Math.max(this.maxGap, counter + 1);
        }
      }
      this.opens++;
    }
  }

  report(): SimulationReport {
    const row = (count: number, base: number, effective: number): SharesRow => {
      const expected = effective * this.items;
      const sd = Math.sqrt(expected * (1 - effective));
      return {
        base,
        effective,
        observed: this.items ? count / this.items : 0,
        count,
        expected,
        difference: (this.items ? count / this.items : 0) - effective,
        deviation: sd > 0 ? (count - expected) / sd : count === expected ? 0 : Number.POSITIVE_INFINITY,
      };
    };
    const rarities = this.effective.rarities.map((r, i) => ({
      rarity: r.rarity,
      ...row(this.rarityCounts[i]!, this.base.rarities[i]!.probability, r.probability),
    }));
    const collectibles = this.effective.collectibles.map((c, i) => ({
      id: c.id,
      rarity: c.rarity,
      ...row(this.collectibleCounts[i]!, this.base.collectibles[i]!.probability, c.probability),
    }));
    return {
      opens: this.opens,
      items: this.items,
      itemsPerOpen: { ...this.effective.itemsPerOpen, observed: this.opens ? this.items / this.opens : 0 },
      rarities,
      collectibles,
      chiSquare: {
        rarities: chiSquareTest(
          this.rarityCounts,
          this.effective.rarities.map((r) => r.probability),
        ),
        collectibles: chiSquareTest(
          this.collectibleCounts,
          this.effective.collectibles.map((c) => c.probability),
        ),
      },
      pity: this.pitySummary(),
    };
  }

  private pitySummary(): PitySummary | null {
    const pity = this.table.pity;
    if (!pity) return null;
    // Every counter value from hard - 1 on rolls the same table (the guaranteed one).
    const rates = new Map<number, number>();
    const hit = (c: number) => {
      const key = Math.min(c, pity.hard - 1);
      if (!rates.has(key)) rates.set(key, hitProbability(this.table, key));
      return rates.get(key)!;
    };
    const span = Math.max(pity.hard, this.atCounter.length);
    const byCounter: CounterRate[] = [];
    const gaps: PitySummary['gaps'] = [];
    let reach = 1;
    let expectedMean = 0;
    let hits = 0;
    const kinds = { natural: 0, soft: 0, guaranteed: 0 };
    for (let c = 0; c < span; c++) {
      const at = this.atCounter[c] ?? { openings: 0, hits: 0 };
      const h = hit(c);
      byCounter.push({ counter: c, openings: at.openings, hits: at.hits, observed: at.openings ? at.hits / at.openings : 0, expected: h });
      // Past hard (the overflow entry) every remaining hit counts, whenever it comes.
      gaps.push({ openings: c + 1, hits: at.hits, share: 0, expectedShare: c < pity.hard ? reach * h : reach });
      expectedMean += (c + 1) * reach * h;
      reach *= 1 - h;
      hits += at.hits;
      if (c >= pity.hard - 1) kinds.guaranteed += at.hits;
      else if (pity.softStart !== undefined && c >= pity.softStart) kinds.soft += at.hits;
      else kinds.natural += at.hits;
    }
    for (const g of gaps) g.share = hits ? g.hits / hits : 0;
    const observedGaps = gaps.filter((g) => g.hits > 0);
    const expectedGuaranteedShare = gaps.slice(pity.hard - 1).reduce((s, g) => s + g.expectedShare, 0);
    return {
      rarity: pity.rarity,
      hard: pity.hard,
      softStart: pity.softStart ?? null,
      softStep: pity.softStep ?? null,
      hits,
      ...kinds,
      guaranteedShare: hits ? kinds.guaranteed / hits : 0,
      expectedGuaranteedShare,
      gap: {
        min: observedGaps[0]?.openings ?? 0,
        median: gapQuantile(gaps, hits, 0.5),
        p90: gapQuantile(gaps, hits, 0.9),
        max: this.maxGap,
        mean: hits ? gaps.reduce((s, g) => s + g.openings * g.hits, 0) / hits : 0,
        expectedMean,
      },
      gaps,
      byCounter,
      openSinceLastHit: this.counter,
    };
  }
}

/** The gap (openings until a pity hit) at quantile `q` of the `hits` observed. */
function gapQuantile(gaps: PitySummary['gaps'], hits: number, q: number): number {
  const rank = Math.max(1, Math.ceil(q * hits));
  let seen = 0;
  for (const g of gaps) if ((seen += g.hits) >= rank) return g.openings;
  return 0;
}

/** Runs `opens` openings of `table` (see OddsSimulation) and reports them. */
export function simulate(table: DropTable, rarities: readonly DropRarity[], opens: number, randomFor: RandomFor): SimulationReport {
  const sim = new OddsSimulation(table, rarities);
  sim.run(opens, randomFor);
  return sim.report();
}

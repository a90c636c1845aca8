/**
 * The odds simulator's pure core (src/domain/simulate.ts) and its chi-square test
 * (src/domain/chi-square.ts): no infrastructure, seeded HMAC streams, so every run is the same.
 */
import { describe, expect, it } from 'vitest';
import {
  buildDropTable,
  chiSquarePValue,
  chiSquareTest,
  effectiveOdds,
  fairRandom,
  gammaQ,
  OddsSimulation,
  simulate,
  tableOdds,
  type ChestRules,
  type DropCollectible,
  type DropRarity,
} from '../src/index.js';

const RARITIES: DropRarity[] = [
  { id: 'common', drop_rate: 0.9, rank: 1 },
  { id: 'rare', drop_rate: 0.09, rank: 2 },
  { id: 'legendary', drop_rate: 0.01, rank: 3 },
];
const COLLECTIBLES: DropCollectible[] = RARITIES.flatMap((r) =>
  Array.from({ length: r.id === 'legendary' ? 2 : 4 }, (_, i) => ({ id: `${r.id}-${i}`, collectionId: 'set', rarity: r.id })),
);
/** One item per opening, legendary 1%: soft pity from 65 and the guarantee at 80 both matter. */
const GACHA: ChestRules = {
  items: { fixed: 1 },
  pools: [{ collection: 'set' }],
  guarantees: [],
  bonus: [],
  pity: { rarity: 'legendary', hard: 80, soft_start: 65, soft_step: 0.02 },
};
/** ln Γ(n) = ln((n - 1)!) for a whole n, summed term by term (reference values). */
const lgammaInt = (n: number) => Array.from({ length: n - 1 }, (_, i) => Math.log(i + 1)).reduce((s, x) => s + x, 0);
const seeded = (seed: string) => (i: number) => fairRandom(seed, 'simulate', i);
const SEED = '5eed'.repeat(16);

describe('chi-square p-values', () => {
  it('agree with reference values of the chi-square distribution', () => {
    expect(chiSquarePValue(3.841458820694124, 1)).toBeCloseTo(0.05, 12);
    expect(chiSquarePValue(5.991464547107979, 2)).toBeCloseTo(0.05, 12);
    expect(chiSquarePValue(9.21034037197618, 2)).toBeCloseTo(0.01, 12);
    // Both branches of Q(a, x): the series (x < a + 1) and the continued fraction.
    expect(chiSquarePValue(100, 59) / 0.0006869731108532).toBeCloseTo(1, 9);
    expect(chiSquarePValue(40, 59)).toBeCloseTo(0.9725316335537086, 12);
    expect(chiSquarePValue(60, 59)).toBeCloseTo(0.439247456660294, 12);
    expect(gammaQ(1, 10)).toBeCloseTo(Math.exp(-10), 14);
    // Tiny p-values keep their precision: Q(n, x) = e^-x Σ_{k<n} x^k / k! for a whole n.
    const poisson = (n: number, x: number) =>
      Array.from({ length: n }, (_, k) => k).reduce((s, k) => s + Math.exp(-x + k * Math.log(x) - lgammaInt(k + 1)), 0);
    expect(gammaQ(5, 200) / poisson(5, 200)).toBeCloseTo(1, 10);
    expect(gammaQ(3, 2.5) / poisson(3, 2.5)).toBeCloseTo(1, 12);
    expect(chiSquarePValue(0, 3)).toBe(1);
  });

  it('tests counts against shares; a count where the share is 0 is impossible', () => {
    expect(chiSquareTest([50, 50], [0.5, 0.5])).toEqual({ statistic: 0, df: 1, pValue: 1 });
    const t = chiSquareTest([600, 400], [0.5, 0.5]);
    expect(t.statistic).toBeCloseTo(40, 10);
    expect(t.pValue).toBeLessThan(1e-9);
    expect(chiSquareTest([5, 1], [1, 0]).pValue).toBe(0);
    expect(chiSquareTest([5, 0], [1, 0])).toEqual({ statistic: 0, df: 0, pValue: 1 });
  });
});

describe('odds simulator', () => {
  const table = buildDropTable(GACHA, RARITIES, COLLECTIBLES);
  const report = simulate(table, RARITIES, 100_000, seeded(SEED));

  it('runs 100,000 openings of a chest with soft and hard pity in line with the disclosed long-run odds', () => {
    const effective = effectiveOdds(table, RARITIES);
    expect(report.opens).toBe(100_000);
    expect(report.items).toBe(100_000);
    for (const [i, r] of report.rarities.entries()) {
      expect(r.rarity).toBe(effective.rarities[i]!.rarity);
      expect(r.effective).toBe(effective.rarities[i]!.probability);
      expect(r.base).toBe(tableOdds(table, RARITIES).rarities[i]!.probability);
      expect(Math.abs(r.observed - r.effective)).toBeLessThan(4 * Math.sqrt((r.effective * (1 - r.effective)) / report.items));
    }
    // Pity matters here: the long-run legendary share is well above the 1% base.
    const legendary = report.rarities.find((r) => r.rarity === 'legendary')!;
    expect(legendary.base).toBeCloseTo(0.01, 10);
    expect(legendary.effective).toBeGreaterThan(0.015);
    expect(report.chiSquare.rarities.df).toBe(2);
    expect(report.chiSquare.rarities.pValue).toBeGreaterThan(0.001);
    expect(report.chiSquare.collectibles.df).toBe(COLLECTIBLES.length - 1);
    expect(report.chiSquare.collectibles.pValue).toBeGreaterThan(0.001);
    expect(report.collectibles.reduce((s, c) => s + c.count, 0)).toBe(report.items);
  });

  it('never lets more than hard openings pass between hits, and shows soft pity raising the hit rate', () => {
    const p = report.pity!;
    expect(p).toMatchObject({ rarity: 'legendary', hard: 80, softStart: 65, softStep: 0.02 });
    expect(p.gap.max).toBeLessThanOrEqual(80);
    expect(p.gaps.slice(80).every((g) => g.hits === 0)).toBe(true);
    expect(p.hits).toBe(p.natural + p.soft + p.guaranteed);
    expect(p.hits).toBe(report.rarities.find((r) => r.rarity === 'legendary')!.count);
    expect(p.natural).toBeGreaterThan(0);
    expect(p.soft).toBeGreaterThan(p.natural / 2);
    expect(p.guaranteed).toBeGreaterThan(0);
    expect(p.gap.min).toBe(1);
    expect(p.gap.min <= p.gap.median && p.gap.median <= p.gap.p90 && p.gap.p90 <= p.gap.max).toBe(true);
    expect(Math.abs(p.gap.mean - p.gap.expectedMean) / p.gap.expectedMean).toBeLessThan(0.03);
    expect(Math.abs(p.guaranteedShare - p.expectedGuaranteedShare)).toBeLessThan(0.02);
    // Per counter: 1% before soft pity, rising by 2 points per opening in it, certain at hard - 1.
    expect(p.byCounter[0]!.expected).toBeCloseTo(0.01, 10);
    expect(p.byCounter[64]!.expected).toBeCloseTo(0.01, 10);
    expect(p.byCounter[65]!.expected).toBeCloseTo(0.03, 10);
    expect(p.byCounter[78]!.expected).toBeCloseTo(0.29, 10);
    expect(p.byCounter[79]!.expected).toBe(1);
    expect(p.byCounter[79]!.observed).toBe(1);
    const rate = (from: number, to: number) => {
      const rows = p.byCounter.slice(from, to);
      const n = rows.reduce((s, r) => s + r.openings, 0);
      return { observed: rows.reduce((s, r) => s + r.hits, 0) / n, expected: rows.reduce((s, r) => s + r.openings * r.expected, 0) / n, n };
    };
    for (const [from, to] of [
      [0, 65],
      [65, 72],
      [72, 79],
    ] as const) {
      const r = rate(from, to);
      expect(Math.abs(r.observed - r.expected)).toBeLessThan(4 * Math.sqrt((r.expected * (1 - r.expected)) / r.n) + 1e-9);
    }
    expect(rate(72, 79).observed).toBeGreaterThan(10 * rate(0, 65).observed);
    expect(p.gaps.reduce((s, g) => s + g.expectedShare, 0)).toBeCloseTo(1, 10);
  });

  it('is reproducible with a seed, and can run in chunks with the same result', () => {
    const again = simulate(table, RARITIES, 5000, seeded(SEED));
    const chunked = new OddsSimulation(table, RARITIES);
    for (let i = 0; i < 5; i++) chunked.run(1000, seeded(SEED));
    expect(chunked.report()).toEqual(again);
    const other = simulate(table, RARITIES, 5000, seeded('01'));
    expect(other.collectibles.map((c) => c.count)).not.toEqual(again.collectibles.map((c) => c.count));
  });

  it('leaves out pity the pool cannot give (content validation refuses it; the guarantee could never be honoured)', () => {
    const commons = COLLECTIBLES.filter((c) => c.rarity === 'common');
    const t = buildDropTable({ ...GACHA, pity: { rarity: 'legendary', hard: 10 } }, RARITIES, commons);
    expect(t.pity).toBeUndefined();
    const r = simulate(t, RARITIES, 2000, seeded(SEED));
    expect(r.pity).toBeNull();
    expect(r.rarities).toEqual([expect.objectContaining({ rarity: 'common', count: 2000, observed: 1 })]);
  });

  it('gives the plain odds and no pity part for a chest without pity, and a tiny p-value for wrong odds', () => {
    const { pity: _, ...rules } = GACHA;
    const plain = buildDropTable({ ...rules, items: { min: 2, max: 4 }, guarantees: [{ min_rarity: 'rare', count: 1 }] }, RARITIES, COLLECTIBLES);
    const r = simulate(plain, RARITIES, 20_000, seeded(SEED));
    expect(r.pity).toBeNull();
    expect(r.rarities.every((x) => x.base === x.effective)).toBe(true);
    expect(r.itemsPerOpen.expected).toBe(3);
    expect(Math.abs(r.itemsPerOpen.observed - 3)).toBeLessThan(0.03);
    expect(r.chiSquare.rarities.pValue).toBeGreaterThan(0.001);
    // The counts of this chest against the odds of the pity chest: the test notices.
    expect(
      chiSquareTest(
        r.rarities.map((x) => x.count),
        report.rarities.map((x) => x.effective),
      ).pValue,
    ).toBeLessThan(1e-6);
  });
});

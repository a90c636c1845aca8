import { describe, expect, it } from 'vitest';
import {
  buildDropTable,
  cryptoRandom,
  odds,
  readContentFile,
  roll,
  rollTable,
  type ChestRules,
  type DropCollectible,
  type RandomSource,
} from '@ccs/shared';

// Small tier: the pure roll and odds code against the default content, no infrastructure.
const content = readContentFile();
const rarities = content.rarities;
const collectibles: DropCollectible[] = content.collections.flatMap((col) =>
  col.collectibles.map((c) => ({ id: c.id, collectionId: col.id, rarity: c.rarity })),
);
const rank = new Map(rarities.map((r) => [r.id, r.rank]));
const ROLLS = 10_000;

/** A small seeded generator (sfc32) for the deterministic checks. */
function seeded(seed: number): RandomSource {
  let a = 0x9e3779b9,
    b = 0x243f6a88,
    c = 0xb7e15162,
    d = seed >>> 0;
  return () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

/** Critical value of the chi-square distribution at p = 0.001 (exact for small df, else Wilson–Hilferty). */
function chiSquareCritical(df: number): number {
  const exact = [0, 10.828, 13.816, 16.266, 18.467, 20.515];
  if (df < exact.length) return exact[df]!;
  const z = 3.0902;
  return df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
}

/** Pearson's statistic of observed counts against probabilities (categories of zero probability must stay empty). */
function chiSquare(observed: Map<string, number>, probabilities: { key: string; p: number }[]): { stat: number; df: number } {
  const total = [...observed.values()].reduce((a, b) => a + b, 0);
  let stat = 0;
  let df = -1;
  for (const { key, p } of probabilities) {
    const o = observed.get(key) ?? 0;
    if (p === 0) {
      expect(o, `${key} has probability 0`).toBe(0);
      continue;
    }
    const e = total * p;
    stat += (o - e) ** 2 / e;
    df += 1;
  }
  for (const key of observed.keys())
    expect(
      probabilities.some((x) => x.key === key),
      `${key} was rolled but has no odds`,
    ).toBe(true);
  return { stat, df };
}

function tally(rules: ChestRules, random: RandomSource, n: number) {
  const byRarity = new Map<string, number>();
  const byCollectible = new Map<string, number>();
  const sizes: number[] = [];
  for (let i = 0; i < n; i++) {
    const items = roll(rules, rarities, collectibles, random);
    sizes.push(items.length);
    for (const it of items) {
      byRarity.set(it.rarity, (byRarity.get(it.rarity) ?? 0) + 1);
      byCollectible.set(it.collectibleId, (byCollectible.get(it.collectibleId) ?? 0) + 1);
    }
  }
  return { byRarity, byCollectible, sizes };
}

describe.each(content.chests.map((c) => [c.id, c.rules] as const))('the %s chest', (_id, rules) => {
  const o = odds(rules, rarities, collectibles);

  it('discloses probabilities that each sum to 1 and an expected item count within [min, max]', () => {
    expect(o.rarities.reduce((s, r) => s + r.probability, 0)).toBeCloseTo(1, 12);
    expect(o.collectibles.reduce((s, c) => s + c.probability, 0)).toBeCloseTo(1, 12);
    expect(o.rarities.reduce((s, r) => s + r.expectedCount, 0)).toBeCloseTo(o.itemsPerOpen.expected, 12);
    expect(o.itemsPerOpen.expected).toBeGreaterThanOrEqual(o.itemsPerOpen.min);
    expect(o.itemsPerOpen.expected).toBeLessThanOrEqual(o.itemsPerOpen.max);
  });

  it(`matches its odds over ${ROLLS} rolls (chi-square over rarities, p > 0.001)`, () => {
    // Seeded, so the strict threshold never fails by chance; the crypto source is checked below.
    const { byRarity, sizes } = tally(rules, seeded(rules.pools.length * 104729 + 1), ROLLS);
    const { stat, df } = chiSquare(
      byRarity,
      o.rarities.map((r) => ({ key: r.rarity, p: r.probability })),
    );
    if (df > 0) expect(stat).toBeLessThan(chiSquareCritical(df));
    const mean = sizes.reduce((a, b) => a + b, 0) / ROLLS;
    expect(Math.abs(mean - o.itemsPerOpen.expected)).toBeLessThan(0.05 * o.itemsPerOpen.expected);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(o.itemsPerOpen.min);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(o.itemsPerOpen.max);
  });

  it(`matches its odds over ${ROLLS} crypto-random rolls as the service rolls them (chi-square, p > 1e-6)`, () => {
    // The production randomness; a looser threshold keeps a chance failure below one run in a million.
    const { byRarity } = tally(rules, cryptoRandom, ROLLS);
    const { stat, df } = chiSquare(
      byRarity,
      o.rarities.map((r) => ({ key: r.rarity, p: r.probability })),
    );
    const critical1e6 = [0, 23.928, 27.631, 30.664, 33.377];
    if (df > 0) expect(stat).toBeLessThan(critical1e6[df] ?? chiSquareCritical(df) * 2);
  });

  it(`matches its odds per collectible over ${ROLLS} rolls (chi-square, p > 0.001)`, () => {
    const { byCollectible } = tally(rules, seeded(rules.pools.length * 7919), ROLLS);
    const { stat, df } = chiSquare(
      byCollectible,
      o.collectibles.map((c) => ({ key: c.id, p: c.probability })),
    );
    expect(stat).toBeLessThan(chiSquareCritical(df));
  });

  it('honours its guarantees in every opening and draws only from its pool', () => {
    const table = buildDropTable(rules, rarities, collectibles);
    const pool = new Set([...table.pool.values()].flat().map((c) => c.id));
    const random = seeded(42);
    for (let i = 0; i < 2000; i++) {
      const items = rollTable(table, random);
      for (const it of items) expect(pool.has(it.collectibleId)).toBe(true);
      let slot = 0;
      for (const g of rules.guarantees) {
        for (let k = 0; k < g.count; k++, slot++) {
          if (slot < items.length) expect(rank.get(items[slot]!.rarity)!).toBeGreaterThanOrEqual(rank.get(g.min_rarity)!);
        }
      }
      expect(items.map((it) => it.slot)).toEqual(items.map((_, k) => k));
    }
  });
});

describe('drop rules', () => {
  const base: ChestRules = { items: { fixed: 2 }, pools: [{ collection: 'mecha-workshop' }], guarantees: [], bonus: [] };

  it('weights rarities by rarity_weights, else by drop rate, among the rarities present in the pool', () => {
    const explicit = odds({ ...base, rarity_weights: { common: 1, rare: 1, legendary: 2 } }, rarities, collectibles);
    expect(explicit.rarities.map((r) => [r.rarity, r.probability])).toEqual([
      ['common', 0.25],
      ['rare', 0.25],
      ['legendary', 0.5],
    ]);
    const onlyCommons = odds({ ...base, pools: [{ collectibles: ['mecha-brass-gear', 'mecha-copper-coil'] }] }, rarities, collectibles);
    expect(onlyCommons.rarities).toEqual([{ rarity: 'common', probability: 1, expectedCount: 2 }]);
    expect(onlyCommons.collectibles.map((c) => c.probability)).toEqual([0.5, 0.5]);
  });

  it('computes guarantees and bonuses exactly', () => {
    const rules: ChestRules = {
      items: { min: 1, max: 3 },
      rarity_weights: { common: 1, rare: 1, legendary: 0 },
      pools: [{ collection: 'sky-kingdom' }],
      guarantees: [{ min_rarity: 'rare', count: 2 }],
      bonus: [{ chance: 0.5, count: 2, min_rarity: 'legendary' }],
    };
    const o = odds(rules, rarities, collectibles);
    // n = 1: one guaranteed rare; n = 2: two; n = 3: two + one ordinary slot (½ common, ½ rare).
    // Rare+ slots weigh rare 1, legendary 0. Bonus: 0.5 × 2 legendary.
    expect(o.itemsPerOpen).toEqual({ min: 1, max: 5, expected: 3 });
    const by = Object.fromEntries(o.rarities.map((r) => [r.rarity, r.expectedCount]));
    expect(by.common).toBeCloseTo(0.5 / 3, 12);
    expect(by.rare).toBeCloseTo((1 + 2 + 2.5) / 3, 12);
    expect(by.legendary).toBeCloseTo(1, 12);
  });

  it('merges a collectible listed twice in the pools into one', () => {
    const o = odds({ ...base, pools: [{ collection: 'mecha-workshop' }, { collectibles: ['mecha-brass-gear'] }] }, rarities, collectibles);
    expect(o.collectibles.filter((c) => c.id === 'mecha-brass-gear')).toHaveLength(1);
  });

  it('draws uniform crypto-grade numbers in [0, 1)', () => {
    const xs = Array.from({ length: 20_000 }, cryptoRandom);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(Math.abs(xs.reduce((a, b) => a + b, 0) / xs.length - 0.5)).toBeLessThan(0.01);
  });
});

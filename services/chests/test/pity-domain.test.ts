import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  buildDropTable,
  counterDistribution,
  effectiveOdds,
  fairRandom,
  hitProbability,
  nextCounter,
  odds,
  readContentFile,
  rollTable,
  seedCommitment,
  tableAtCounter,
  tableOdds,
  type DropCollectible,
} from '@ccs/shared';

// Small tier: pity and the HMAC stream as pure code against the default content, no infrastructure.
const content = readContentFile();
const rarities = content.rarities;
const collectibles: DropCollectible[] = content.collections.flatMap((col) =>
  col.collectibles.map((c) => ({ id: c.id, collectionId: col.id, rarity: c.rarity })),
);
const chest = (id: string) => content.chests.find((c) => c.id === id)!;
const SEED = 'a3f1'.repeat(16);

/** Pearson's statistic of observed counts against probabilities. */
function chiSquare(observed: Map<string, number>, probabilities: { rarity: string; probability: number }[]) {
  const total = [...observed.values()].reduce((a, b) => a + b, 0);
  return probabilities.reduce(
    (s, { rarity, probability }) => s + ((observed.get(rarity) ?? 0) - total * probability) ** 2 / (total * probability),
    0,
  );
}

describe('the HMAC-SHA256 random stream', () => {
  it('is HMAC-SHA256(seed, "client:nonce:block") cut into five 48-bit numbers per block', () => {
    const block0 = createHmac('sha256', Buffer.from(SEED, 'hex')).update('player-seed:7:0').digest();
    const block1 = createHmac('sha256', Buffer.from(SEED, 'hex')).update('player-seed:7:1').digest();
    const random = fairRandom(SEED, 'player-seed', 7);
    const first = Array.from({ length: 6 }, random);
    expect(first.slice(0, 5)).toEqual([0, 1, 2, 3, 4].map((i) => block0.readUIntBE(6 * i, 6) / 2 ** 48));
    expect(first[5]).toBe(block1.readUIntBE(0, 6) / 2 ** 48);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('commits with SHA-256 of the seed bytes, which differs from every block of the stream', () => {
    const commitment = seedCommitment(SEED);
    expect(commitment).toMatch(/^[0-9a-f]{64}$/);
    const block = createHmac('sha256', Buffer.from(SEED, 'hex')).update('c:0:0').digest('hex');
    expect(commitment).not.toBe(block);
  });

  it('gives another stream for another nonce or client seed', () => {
    const a = Array.from({ length: 5 }, fairRandom(SEED, 'c', 0));
    expect(Array.from({ length: 5 }, fairRandom(SEED, 'c', 1))).not.toEqual(a);
    expect(Array.from({ length: 5 }, fairRandom(SEED, 'd', 0))).not.toEqual(a);
  });

  it('matches the disclosed odds of every chest without pity over 20,000 openings, one nonce each (chi-square, p > 1e-6)', () => {
    for (const c of content.chests.filter((x) => !x.rules.pity)) {
      const table = buildDropTable(c.rules, rarities, collectibles);
      const observed = new Map<string, number>();
      for (let nonce = 0; nonce < 20_000; nonce++) {
        for (const it of rollTable(table, fairRandom(SEED, 'stats', nonce))) observed.set(it.rarity, (observed.get(it.rarity) ?? 0) + 1);
      }
      const expected = tableOdds(table, rarities).rarities;
      // Critical values at p = 1e-6 for 1 and 2 degrees of freedom.
      expect(chiSquare(observed, expected), c.id).toBeLessThan(expected.length === 2 ? 23.93 : 27.63);
    }
  });
});

describe('pity', () => {
  const silver = buildDropTable(chest('silver-chest').rules, rarities, collectibles);
  const abyssal = buildDropTable(chest('abyssal-chest').rules, rarities, collectibles);
  const legendary = (items: { rarity: string }[]) => items.some((it) => it.rarity === 'legendary');

  it('never lets the counter reach hard over 20,000 seeded openings, and resets it exactly on a legendary', () => {
    for (const [table, hard] of [
      [silver, 10],
      [abyssal, 15],
    ] as const) {
      let counter = 0;
      let longest = 0;
      let run = 0;
      for (let nonce = 0; nonce < 20_000; nonce++) {
        const items = rollTable(tableAtCounter(table, counter), fairRandom(SEED, 'pity', nonce));
        if (counter === hard - 1) expect(legendary(items)).toBe(true);
        run += 1;
        if (legendary(items)) {
          longest = Math.max(longest, run);
          run = 0;
        }
        counter = nextCounter(table, counter, items);
        expect(counter).toBeLessThan(hard);
      }
      expect(longest).toBeLessThanOrEqual(hard);
    }
  });

  it('raises the legendary share from soft_start on, by soft_step per opening, keeping the others in proportion', () => {
    const at = (c: number) => tableAtCounter(abyssal, c).base;
    const share = (dist: { rarity: string; probability: number }[], r: string) => dist.find((d) => d.rarity === r)!.probability;
    expect(at(4)).toEqual(abyssal.base);
    expect(share(at(5), 'legendary')).toBeCloseTo(share(abyssal.base, 'legendary') + 0.05, 12);
    expect(share(at(8), 'legendary')).toBeCloseTo(share(abyssal.base, 'legendary') + 0.2, 12);
    expect(share(at(8), 'common') / share(at(8), 'rare')).toBeCloseTo(share(abyssal.base, 'common') / share(abyssal.base, 'rare'), 12);
    expect(at(8).reduce((s, d) => s + d.probability, 0)).toBeCloseTo(1, 12);
    // At hard - 1 the first slot can only be legendary.
    expect(tableAtCounter(abyssal, 14).guarantees[0]!.distribution).toEqual([{ rarity: 'legendary', probability: 1 }]);
  });

  it('shows soft pity in the observed shares: openings made at counter 8 match the odds at 8', () => {
    const table = tableAtCounter(abyssal, 8);
    const observed = new Map<string, number>();
    for (let nonce = 0; nonce < 20_000; nonce++) {
      for (const it of rollTable(table, fairRandom(SEED, 'soft', nonce))) observed.set(it.rarity, (observed.get(it.rarity) ?? 0) + 1);
    }
    const expected = tableOdds(table, rarities).rarities;
    expect(chiSquare(observed, expected)).toBeLessThan(27.63);
    expect(expected.find((r) => r.rarity === 'legendary')!.probability).toBeGreaterThan(
      odds(chest('abyssal-chest').rules, rarities, collectibles).rarities[2]!.probability,
    );
  });

  it('discloses long-run shares that the counter carried over 50,000 openings reproduces', () => {
    const effective = effectiveOdds(silver, rarities).rarities;
    expect(effective.reduce((s, r) => s + r.probability, 0)).toBeCloseTo(1, 12);
    const weights = counterDistribution(silver);
    expect(weights).toHaveLength(10);
    expect(weights.reduce((s, w) => s + w, 0)).toBeCloseTo(1, 12);
    expect(hitProbability(silver, 9)).toBe(1);
    const observed = new Map<string, number>();
    let counter = 0;
    for (let nonce = 0; nonce < 50_000; nonce++) {
      const items = rollTable(tableAtCounter(silver, counter), fairRandom(SEED, 'long-run', nonce));
      for (const it of items) observed.set(it.rarity, (observed.get(it.rarity) ?? 0) + 1);
      counter = nextCounter(silver, counter, items);
    }
    expect(chiSquare(observed, effective)).toBeLessThan(27.63);
  });
});

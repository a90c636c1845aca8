/**
 * `npm run admin -- simulate` against real Postgres and NATS: the chests service answers
 * chests.v1.admin_drop_inputs with the demo content's rules, and the simulator's shares, chi-square
 * test and pity figures agree with what the odds subject discloses, for the demo's Silver Chest
 * (legendary, hard 10) and Abyssal Chest (legendary, hard 15, soft pity from 5 by 0.05).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, AdminDropInputs, GetChestOdds, readContentFile } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { runAdminIn } from '../../../tools/admin/test/support/run-admin.js';
import type { SimulationDocument } from '../../../tools/admin/src/commands/simulate.js';

const ADMIN = fileURLToPath(new URL('../../../tools/admin/src/main.ts', import.meta.url));
const exec = promisify(execFile);
const SEED = 'c0ffee'.repeat(8);

// Only a safety net against a hang: 100,000 openings take seconds, or a minute on a machine busy
// with other work. How fast the simulator runs is the bench's business, not this test's.
const SAFETY_NET_MS = 180_000;

describe('admin simulate (the odds simulator)', { timeout: SAFETY_NET_MS }, () => {
  let stack: TestStack;
  let appId: string;

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'chests'] });
    appId = JSON.parse((await admin(['list-apps', '--json'])).out).apps[0].appId;
    // The demo content reaches chests asynchronously.
    await eventually(() => stack.bus.request(AdminDropInputs, { appId, slug: 'silver-chest' }, { requestId: 'simulate-test' }), 20_000);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const admin = (argv: string[]) => runAdminIn(stack, argv);
  async function simulateJson(chest: string, opens = 100_000, seed = SEED): Promise<SimulationDocument> {
    const r = await admin(['simulate', '--app', appId, '--chest', chest, '--opens', String(opens), '--seed', seed, '--json']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^Simulating [\d,]+ openings of [a-z-]+ \(content version 1\)…\n[^]*done: [\d,]+ openings in \d+\.\d s$/);
    return JSON.parse(r.out);
  }
  /** The disclosed odds of the chest, as the odds endpoint computes them. */
  const disclosed = (chestTypeId: string) => stack.bus.request(GetChestOdds, { chestTypeId }, { requestId: 'simulate-test', appId });

  /** What holds for any run: shares within 5 standard deviations of the disclosure, chi-square p not tiny, pity never past hard. */
  async function expectFair(doc: SimulationDocument, hard: number, poolSize = 60) {
    const odds = await disclosed(doc.chest.id);
    expect(doc.rarities.map((r) => [r.rarity, r.base])).toEqual(odds.rarities.map((r) => [r.rarity, r.probability]));
    expect(doc.rarities.map((r) => [r.rarity, r.effective])).toEqual(odds.pity!.effectiveRarities.map((r) => [r.rarity, r.probability]));
    for (const r of doc.rarities) expect(Math.abs(r.deviation), r.rarity).toBeLessThan(5);
    expect(doc.chiSquare.rarities.df).toBe(2);
    expect(doc.chiSquare.rarities.pValue).toBeGreaterThan(0.001);
    expect(doc.chiSquare.collectibles.df).toBe(poolSize - 1);
    expect(doc.chiSquare.collectibles.pValue).toBeGreaterThan(0.001);
    expect(doc.collectibles).toHaveLength(poolSize);
    const p = doc.pity!;
    expect(p.hard).toBe(hard);
    expect(p.gap.max).toBeLessThanOrEqual(hard);
    expect(p.hits).toBe(p.natural + p.soft + p.guaranteed);
    expect(p.gaps.reduce((s, g) => s + g.hits, 0)).toBe(p.hits);
    expect(Math.abs(p.gap.mean - p.gap.expectedMean) / p.gap.expectedMean).toBeLessThan(0.02);
  }

  it('silver-chest: 100,000 seeded openings, shares as disclosed, the hard guarantee at 10', async () => {
    const doc = await simulateJson('silver-chest');
    expect(doc).toMatchObject({ appId, opens: 100_000, seed: SEED, chest: { slug: 'silver-chest', contentVersion: 1, inCatalog: true } });
    expect(doc.itemsPerOpen).toMatchObject({ min: 3, max: 5, expected: 4 });
    await expectFair(doc, 10);
    const p = doc.pity!;
    expect(p).toMatchObject({ rarity: 'legendary', softStart: null, softStep: null, soft: 0 });
    expect(p.guaranteed).toBeGreaterThan(0);
    expect(Math.abs(p.guaranteedShare - p.expectedGuaranteedShare)).toBeLessThan(0.005);
    expect(p.byCounter[9]).toMatchObject({ expected: 1, observed: 1 });
    expect(p.gaps[9]!.hits).toBe(p.guaranteed);
  });

  it('abyssal-chest by id: soft pity from counter 5 raises the hit rate as ruled, the guarantee at 15', async () => {
    const { chestTypeId } = await stack.bus.request(AdminDropInputs, { appId, slug: 'abyssal-chest' }, { requestId: 'simulate-test' });
    const doc = await simulateJson(chestTypeId);
    expect(doc.chest).toMatchObject({ id: chestTypeId, slug: 'abyssal-chest', name: 'Abyssal Chest' });
    expect(doc.itemsPerOpen).toMatchObject({ min: 2, max: 4 });
    await expectFair(doc, 15, 24);
    const p = doc.pity!;
    expect(p).toMatchObject({ rarity: 'legendary', softStart: 5, softStep: 0.05 });
    // About one opening in eight is made in soft pity: its hits show up, at rising rates.
    expect(p.soft).toBeGreaterThan(0);
    expect(p.byCounter[8]!.expected).toBeGreaterThan(p.byCounter[5]!.expected);
    expect(p.byCounter[5]!.expected).toBeGreaterThan(p.byCounter[4]!.expected);
    expect(p.byCounter[14]!.expected).toBe(1);
  });

  it('is reproducible with --seed, prints a readable report, and refuses bad input', async () => {
    const [a, b] = [await simulateJson('silver-chest', 3000), await simulateJson('silver-chest', 3000)];
    expect(a.collectibles.map((c) => c.count)).toEqual(b.collectibles.map((c) => c.count));
    expect(a.pity).toEqual(b.pity);

    const text = await admin(['simulate', '--app', appId, '--chest', 'abyssal-chest', '--opens', '20000']);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/^Abyssal Chest \(abyssal-chest, [0-9a-f-]{36}\), content version 1\n20,000 openings, [\d,]+ items/);
    expect(text.out).toContain('cryptographic randomness (give --seed to reproduce a run)');
    expect(text.out).toMatch(/^RARITY +BASE +LONG-RUN +OBSERVED +DIFFERENCE +COUNT +DEVIATION$/m);
    expect(text.out).toMatch(/^legendary +\d+\.\d\d% +\d+\.\d\d% +\d+\.\d\d% +[+-]\d\.\d+ pp +[\d,]+ +[+-]?\d+\.\d+σ$/m);
    expect(text.out).toMatch(/^Chi-square of the rarity counts against the long-run shares: \d+\.\d\d with 2 degrees of freedom, p = /m);
    expect(text.out).toContain('Collectibles: the 20 of 24 furthest from their long-run share (--json lists all):');
    expect(text.out).toMatch(/^Pity: legendary or better, hard 15 \(soft pity from counter 5, \+5\.00% per opening\)$/m);
    expect(text.out).toMatch(/openings between hits: min 1, median \d+, p90 \d+, max \d+ \(never above hard 15\)/);
    expect(text.out).toMatch(/^Pity hit rate by counter/m);

    const usage = (args: string[]) => admin(['simulate', '--app', appId, ...args]);
    expect((await usage(['--chest', 'silver-chest', '--opens', '0'])).code).toBe(2);
    expect((await usage(['--chest', 'silver-chest', '--seed', 'xyz'])).err).toMatch(/^--seed takes hex bytes/);
    expect((await usage([])).err).toMatch(/^missing --chest/);
    const missing = await usage(['--chest', 'no-such-chest']);
    expect(missing).toMatchObject({ code: 1, out: '' });
    expect(missing.err).toMatch(/No chest type "no-such-chest" in app/);
  });

  it('names the complete gachas a chest takes part in, with what to change (content that allows them)', async () => {
    // The forest's set (it has a completion reward) only from the gems-only golden chest, in content
    // without the rule (and without the JP pack), so it loads.
    const content = structuredClone(readContentFile());
    content.compliance = { ...content.compliance!, forbid_complete_gacha: false, rule_packs: [] };
    for (const ch of content.chests)
      if (ch.id !== 'golden-chest') ch.rules.pools = ch.rules.pools.filter((p) => !('collection' in p) || p.collection !== 'enchanted-forest');
    const other = await stack.bus.request(AdminCreateApp, { name: 'Complete gacha', content }, { requestId: 'simulate-test' });
    await eventually(() => stack.bus.request(AdminDropInputs, { appId: other.appId, slug: 'golden-chest' }, { requestId: 'simulate-test' }), 20_000);
    const r = await admin(['simulate', '--app', other.appId, '--chest', 'golden-chest', '--opens', '1000', '--seed', SEED, '--json']);
    expect(r.code, r.err).toBe(0);
    const forest = content.collections.find((c) => c.id === 'enchanted-forest')!;
    expect((JSON.parse(r.out) as SimulationDocument).completeGachas).toEqual([
      {
        collection: 'enchanted-forest',
        collectibles: forest.collectibles.map((c) => c.id),
        chests: ['golden-chest'],
        advice: expect.stringContaining('free chest'),
      },
    ]);
    const text = await admin(['simulate', '--app', other.appId, '--chest', 'golden-chest', '--opens', '1000', '--seed', SEED]);
    expect(text.out).toMatch(/Complete gacha: collection enchanted-forest rewards its completion[^]*drop these collectibles from a free chest too/);
    // A chest outside it, and the demo app's chests (its coin chests drop every collection), name none.
    expect(
      JSON.parse((await admin(['simulate', '--app', other.appId, '--chest', 'wooden-chest', '--opens', '1000', '--seed', SEED, '--json'])).out)
        .completeGachas,
    ).toEqual([]);
    expect((await simulateJson('silver-chest', 1000)).completeGachas).toEqual([]);
  });

  it('runs as a process: JSON alone on stdout, progress on stderr', async () => {
    const r = await exec(
      process.execPath,
      ['--import', 'tsx', '--conditions=development', ADMIN, 'simulate', '--app', appId, '--chest', 'silver-chest', '--opens', '100000', '--json'],
      {
        env: { ...process.env, NATS_URL: stack.env.NATS_URL!, NATS_PREFIX: stack.env.NATS_PREFIX! },
        timeout: SAFETY_NET_MS - 10_000,
      },
    );
    const doc: SimulationDocument = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ opens: 100_000, seed: null, random: 'crypto' });
    expect(r.stderr).toMatch(/done: 100,000 openings in \d+\.\d s/);
    expect(doc.pity!.gap.max).toBeLessThanOrEqual(10);
  });
});

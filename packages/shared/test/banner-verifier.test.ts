/**
 * scripts/verify-opening.mjs restates the banner pull with nothing of ours (docs/fairness.md,
 * "Banner pulls"): it must agree with src/domain/banner.ts on every pull, and its command line
 * must recompute a banner opening from the banner's odds document, featured roll included.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fairRandom, pullBanner, seedCommitment, type BannerRules, type DropTable } from '../src/index.js';
import { BANNER, GACHA, gachaTable, MIXED, mixedTable, ruleInputs } from './banner-fixtures.js';

const VERIFY = fileURLToPath(new URL('../../../scripts/verify-opening.mjs', import.meta.url));

interface VerifierStanding {
  guaranteed_featured: boolean;
  pity: number;
  spark_points: number;
}
interface VerifierPull {
  openings: {
    items: { slot: number; collectible_id: string; rarity: string; featured: boolean }[];
    pity_before: number;
    pity_after: number;
    banner: { featured: boolean; guaranteed_before: boolean; guaranteed_after: boolean; spark_points_after: number; floor_rerolled: boolean };
  }[];
  standing: VerifierStanding;
}
/** What the test uses of the verifier's module (plain JavaScript, imported by its path). */
interface Verifier {
  dropTable(rules: unknown, inputs: unknown): unknown;
  bannerPull(table: unknown, banner: BannerRules, standing: VerifierStanding, count: number, randomFor: (i: number) => () => number): VerifierPull;
}
const verifier = (await import(pathToFileURL(VERIFY).href)) as Verifier;

/** A reproducible stream of test inputs. */
const inputs = fairRandom('1234'.repeat(16), 'inputs', 0);
const hex64 = () =>
  Array.from({ length: 8 }, () =>
    Math.floor(inputs() * 2 ** 32)
      .toString(16)
      .padStart(8, '0'),
  ).join('');

describe('the offline verifier and the service agree on banner pulls', () => {
  it('on 1,000 pulls over random seeds, standings, both chests, with and without the guarantee, single and ten-pulls', () => {
    const chests: { table: DropTable; theirs: unknown; hard: number }[] = [
      { table: gachaTable(), theirs: verifier.dropTable(GACHA, ruleInputs), hard: 90 },
      { table: mixedTable(), theirs: verifier.dropTable(MIXED, ruleInputs), hard: 8 },
    ];
    const banners: BannerRules[] = [
      BANNER,
      { ...BANNER, guarantee: false, featured: { ...BANNER.featured, share: 0.75 } },
      { ...BANNER, ten_pull_floor: 'legendary', featured: { rarity: 'rare', collectibles: ['rare-3'], share: 0.5 } },
    ];
    let featured = 0;
    let floors = 0;
    for (let k = 0; k < 1_000; k++) {
      const chest = chests[k % 2]!;
      const banner = banners[Math.floor(k / 2) % 3]!;
      const seed = hex64();
      const client = `client-${k}`;
      const nonce = Math.floor(inputs() * 1000);
      const count = inputs() < 0.3 ? 10 : 1;
      const standing = { guaranteed_featured: inputs() < 0.3, pity: Math.floor(inputs() * chest.hard), spark_points: Math.floor(inputs() * 400) };
      const randomFor = (i: number) => fairRandom(seed, client, nonce + i);
      const ours = pullBanner(
        chest.table,
        banner,
        { guaranteedFeatured: standing.guaranteed_featured, pity: standing.pity, sparkPoints: standing.spark_points },
        count,
        randomFor,
      );
      const theirs = verifier.bannerPull(chest.theirs, banner, standing, count, randomFor);
      expect(theirs.openings.map((o) => ({ ...o, items: o.items.map((it) => ({ ...it })) }))).toEqual(
        ours.openings.map((o) => ({
          items: o.items.map((it) => ({ slot: it.slot, collectible_id: it.collectibleId, rarity: it.rarity, featured: it.featured })),
          pity_before: o.pity.before,
          pity_after: o.pity.after,
          banner: {
            featured: o.banner.featured,
            guaranteed_before: o.banner.guaranteedBefore,
            guaranteed_after: o.banner.guaranteedAfter,
            spark_points_after: o.banner.sparkPointsAfter,
            floor_rerolled: o.banner.floorRerolled,
          },
        })),
      );
      expect(theirs.standing).toEqual({
        guaranteed_featured: ours.standing.guaranteedFeatured,
        pity: ours.standing.pity,
        spark_points: ours.standing.sparkPoints,
      });
      featured += ours.openings.filter((o) => o.banner.featured).length;
      floors += ours.openings.filter((o) => o.banner.floorRerolled).length;
    }
    // The comparison went through the featured roll and the floor, many times.
    expect(featured).toBeGreaterThan(100);
    expect(floors).toBeGreaterThan(10);
  });
});

describe('verify-opening.mjs --banner', () => {
  const run = promisify(execFile);
  /** Runs the script; resolves with its exit status and parsed output. */
  const verify = async (args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, [VERIFY, ...args]);
      return { code: 0, out: JSON.parse(stdout) as Record<string, unknown> };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, out: e.stdout ? (JSON.parse(e.stdout) as Record<string, unknown>) : {} };
    }
  };

  /** The opening documents of a pull, as the API records them (`meta.fairness`, `meta.pity`, `meta.banner`). */
  const documents = (pull: ReturnType<typeof pullBanner>, seed: string, client: string, first: number) =>
    pull.openings.map((o, i) => ({
      data: { collectibles: o.items.map((it) => ({ id: it.collectibleId, attributes: { rarity: it.rarity } })) },
      meta: {
        fairness: { server_seed_hash: seedCommitment(seed), client_seed: client, nonce: first + i },
        pity: { opens_since_before: o.pity.before },
        banner: {
          id: '00000000-0000-4000-8000-000000000001',
          featured: o.banner.featured,
          guaranteed_before: o.banner.guaranteedBefore,
          spark_points_after: o.banner.sparkPointsAfter,
          floor_rerolled: o.banner.floorRerolled,
        },
      },
    }));
  const oddsOf = (rules: unknown) => ({
    data: {
      type: 'banner_odds',
      id: '00000000-0000-4000-8000-000000000001',
      attributes: { ...BANNER, spark: { cost: 300, currency: null }, rules, rule_inputs: ruleInputs },
    },
  });

  /** Runs --batch: its exit status and its output lines, parsed. */
  const batch = async (file: string) => {
    let code = 0;
    let stdout: string;
    try {
      ({ stdout } = await run(process.execPath, [VERIFY, '--batch', file]));
    } catch (err) {
      ({ code, stdout } = err as { code: number; stdout: string });
    }
    return {
      code,
      lines: stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    };
  };

  it('recomputes every opening of two ten-pulls (featured roll, guarantee, pity, the floor) and catches a changed featured result', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccs-banner-verify-'));
    try {
      // A ten-pull of the many-slot chest with the flag set, and one of the gacha whose floor re-rolls the tenth (pinned in banner.test.ts).
      const mixedSeed = 'be'.repeat(32);
      const mixed = pullBanner(mixedTable(), BANNER, { guaranteedFeatured: true, pity: 5, sparkPoints: 0 }, 10, (i) =>
        fairRandom(mixedSeed, 'cli', 20 + i),
      );
      const gachaSeed = '0'.repeat(64);
      const gacha = pullBanner(gachaTable(), BANNER, { guaranteedFeatured: false, pity: 0, sparkPoints: 0 }, 10, (i) =>
        fairRandom(gachaSeed, 'pinned', i),
      );
      expect(gacha.openings[9]!.banner.floorRerolled).toBe(true);
      expect(mixed.openings.some((o) => o.banner.featured)).toBe(true);
      const mixedDocs = documents(mixed, mixedSeed, 'cli', 20);
      const gachaDocs = documents(gacha, gachaSeed, 'pinned', 0);
      const cases = [
        ...mixedDocs.map((expect) => ({ banner: oddsOf(MIXED), server_seed: mixedSeed, expect })),
        ...gachaDocs.map((expect) => ({ banner: oddsOf(GACHA), server_seed: gachaSeed, expect })),
        // The tenth gacha opening checked as if the floor had not re-rolled it: not what was recorded.
        { banner: oddsOf(GACHA), server_seed: gachaSeed, expect: gachaDocs[9], floor_rerolled: false },
      ];
      await writeFile(join(dir, 'cases.json'), JSON.stringify(cases));
      const { code, lines } = await batch(join(dir, 'cases.json'));
      expect(lines.at(-1)).toEqual({ cases: 21, failed: 1 });
      expect(code).toBe(1);
      expect(lines.slice(0, 20).every((l) => l.matches === true && l.commitment_ok === true)).toBe(true);
      expect(lines.slice(0, 10).map((l) => (l.banner as { featured: boolean }).featured)).toEqual(mixed.openings.map((o) => o.banner.featured));
      expect(lines[19]!.banner).toMatchObject({ floor_rerolled: true });
      expect(lines[20]).toMatchObject({ matches: false, banner: { floor_rerolled: false } });

      // One opening on the command line; then the server claims a featured result the stream did not give: refused.
      await writeFile(join(dir, 'banner.json'), JSON.stringify(oddsOf(MIXED)));
      await writeFile(join(dir, 'o0.json'), JSON.stringify(mixedDocs[0]));
      const good = await verify(['--banner', join(dir, 'banner.json'), '--server-seed', mixedSeed, '--expect', join(dir, 'o0.json')]);
      expect(good).toMatchObject({ code: 0, out: { matches: true, commitment_ok: true, banner: { featured: mixed.openings[0]!.banner.featured } } });
      const tampered = {
        ...mixedDocs[0]!,
        meta: { ...mixedDocs[0]!.meta, banner: { ...mixedDocs[0]!.meta.banner, featured: !mixed.openings[0]!.banner.featured } },
      };
      await writeFile(join(dir, 'tampered.json'), JSON.stringify(tampered));
      const bad = await verify(['--banner', join(dir, 'banner.json'), '--server-seed', mixedSeed, '--expect', join(dir, 'tampered.json')]);
      expect(bad).toMatchObject({ code: 1, out: { matches: false } });
      // --guaranteed-before takes the place of the document's flag; it only goes with --banner.
      const flag = String(!mixed.openings[0]!.banner.guaranteedBefore);
      const given = await verify([
        '--banner',
        join(dir, 'banner.json'),
        '--server-seed',
        mixedSeed,
        '--expect',
        join(dir, 'o0.json'),
        '--guaranteed-before',
        flag,
      ]);
      expect(given.out.banner).toMatchObject({ guaranteed_before: flag === 'true' });
      const misplaced = await verify([
        '--odds',
        join(dir, 'banner.json'),
        '--server-seed',
        mixedSeed,
        '--expect',
        join(dir, 'o0.json'),
        '--guaranteed-before',
        flag,
      ]);
      expect(misplaced.code).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('documents --banner in --help', async () => {
    const { stdout } = await run(process.execPath, [VERIFY, '--help']);
    expect(stdout).toContain('--banner');
    expect(stdout).toContain('Banner pulls');
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GetChestOdds,
  GetFairness,
  GetPlayerOdds,
  ListPity,
  RotateSeed,
  startService,
  VerifyOpening,
  type BaseConfig,
  type OpeningView,
  type ReplyOf,
} from '@ccs/shared';
import { chestsService } from '../src/service.js';
import { callOf, chestsApp, chestsSql, grantedChests, openChest, startChestsTier, type ChestsTier } from './support/chests-tier.js';

const VERIFY = fileURLToPath(new URL('../../../scripts/verify-opening.mjs', import.meta.url));

/** One opening of the 1,000, and the chest type it opened. */
interface Opened {
  slug: 'silver-chest' | 'abyssal-chest';
  opening: OpeningView;
}

/** What scripts/verify-opening.mjs reads of an opening: its items in slot order, as the opening result lists them. */
const asVerifierCase = (o: OpeningView) => ({
  collectibles: [...o.items].sort((a, b) => a.slot - b.slot).map((i) => ({ id: i.collectibleId, attributes: { rarity: i.rarity } })),
});

/** Runs scripts/verify-opening.mjs --batch over the cases: its output lines, parsed. */
async function verifyBatch(cases: object[]): Promise<{ matches?: boolean; commitment_ok?: boolean; cases?: number; failed?: number }[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ccs-verify-'));
  try {
    await writeFile(join(dir, 'cases.json'), JSON.stringify(cases));
    const { stdout } = await promisify(execFile)(process.execPath, [VERIFY, '--batch', join(dir, 'cases.json')], { maxBuffer: 64 * 1024 * 1024 });
    return stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// Verifiable randomness and pity on the service tier: chests alone, called over its subjects. The
// verifier's reading of the public documents (opening results, odds documents) and the HTTP
// refusals are end to end: test/security/hostile-studio.test.ts and test/e2e/chests/fairness.test.ts.
describe('verifiable randomness and pity (service tier)', () => {
  let tier: ChestsTier;
  let appId: string;
  let types: Record<string, string>;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    ({ appId, types } = await chestsApp(tier));
  });
  afterAll(async () => tier?.close());

  /** Opens chests a few at a time (one player's openings are serialised by the service anyway). */
  async function openAll(playerId: string, slug: Opened['slug'], chests: string[]): Promise<Opened[]> {
    const out: Opened[] = [];
    for (let i = 0; i < chests.length; i += 5) {
      const answers = await Promise.all(chests.slice(i, i + 5).map((id) => openChest(tier, appId, playerId, id)));
      out.push(...answers.map((opening) => ({ slug, opening })));
    }
    return out;
  }

  /** Pity never exceeded: a counter stays below hard, and resets exactly when the rarity drops (openings in the service's order). */
  function expectPityChain(inOrder: Opened[], slug: Opened['slug'], hard: number) {
    let counter = 0;
    for (const { opening } of inOrder.filter((x) => x.slug === slug)) {
      const pity = opening.pity!;
      const legendary = opening.items.some((c) => c.rarity === 'legendary');
      expect(pity.opensSinceBefore).toBe(counter);
      expect(pity.opensSinceBefore).toBeLessThan(hard);
      expect(pity.triggered).toBe(counter === hard - 1);
      if (pity.triggered) expect(legendary).toBe(true);
      counter = legendary ? 0 : counter + 1;
      expect(pity.opensSinceAfter).toBe(counter);
    }
  }

  it(
    'recomputes 1,000 openings across seed rotations, with pity in play, with scripts/verify-opening.mjs: all identical',
    { timeout: 300_000 },
    async () => {
      const playerId = randomUUID();
      const ctx = () => callOf(appId, playerId);
      const openings: Opened[] = [];
      const revealed = new Map<string, string>();
      const rotate = async (clientSeed?: string) => {
        const r = await tier.bus.request(RotateSeed, clientSeed ? { clientSeed } : {}, ctx());
        revealed.set(r.revealed.serverSeedHash, r.revealed.serverSeed);
      };
      expect(await tier.bus.request(GetFairness, {}, ctx())).toMatchObject({ nonce: 0, algorithm: 'hmac-sha256-48bit-v1' });
      for (let round = 0; round < 20; round++) {
        // Silver (hard pity at 10) and Abyssal (soft pity from 5, hard at 15) in turn.
        const slug = round % 2 === 0 ? 'silver-chest' : 'abyssal-chest';
        openings.push(...(await openAll(playerId, slug, (await grantedChests(tier, appId, { playerId, chestTypeId: slug, n: 50 })).chests)));
        if (round % 5 === 4) await rotate(round === 9 ? `client-${round}` : undefined);
      }
      await rotate();
      expect(openings).toHaveLength(1000);

      // Openings sent together run in the order the service serialised them: seed pair, then nonce.
      const hashOf = (o: Opened) => o.opening.fairness!.serverSeedHash;
      const seedOrder = [...new Set(openings.map(hashOf))];
      const position = (o: Opened) => seedOrder.indexOf(hashOf(o)) * 1e6 + o.opening.fairness!.nonce;
      const inOrder = [...openings].sort((a, b) => position(a) - position(b));
      expectPityChain(inOrder, 'silver-chest', 10);
      expectPityChain(inOrder, 'abyssal-chest', 15);
      // Nonces run 0, 1, 2, … within each seed pair.
      const bySeed = new Map<string, number[]>();
      for (const o of openings) bySeed.set(hashOf(o), [...(bySeed.get(hashOf(o)) ?? []), o.opening.fairness!.nonce]);
      expect(bySeed.size).toBe(4);
      for (const nonces of bySeed.values()) expect(nonces.sort((a, b) => a - b)).toEqual(nonces.map((_, i) => i));

      // The independent script recomputes every opening from the disclosed rules and the revealed seeds.
      const odds: Partial<Record<Opened['slug'], ReplyOf<typeof GetChestOdds>>> = {};
      for (const slug of ['silver-chest', 'abyssal-chest'] as const)
        odds[slug] = await tier.bus.request(GetChestOdds, { chestTypeId: types[slug]!, rulesVersion: 1 }, ctx());
      const cases = openings.map(({ slug, opening }) => ({
        odds: { rules: odds[slug]!.rules, rule_inputs: odds[slug]!.ruleInputs },
        server_seed: revealed.get(opening.fairness!.serverSeedHash),
        server_seed_hash: opening.fairness!.serverSeedHash,
        client_seed: opening.fairness!.clientSeed,
        nonce: opening.fairness!.nonce,
        opens_since_before: opening.pity!.opensSinceBefore,
        expect: asVerifierCase(opening),
      }));
      expect(cases.every((c) => c.server_seed)).toBe(true);
      const lines = await verifyBatch(cases);
      expect(lines.at(-1)).toEqual({ cases: 1000, failed: 0 });
      expect(lines.slice(0, -1).every((l) => l.matches === true && l.commitment_ok === true)).toBe(true);

      // The service's own verification agrees, on a sample.
      for (const { opening } of openings.filter((_, i) => i % 100 === 7)) {
        expect(await tier.bus.request(VerifyOpening, { openingId: opening.openingId }, ctx())).toMatchObject({
          matches: true,
          nonce: opening.fairness!.nonce,
          serverSeedHash: opening.fairness!.serverSeedHash,
        });
      }
    },
  );

  it(
    "keeps nonces and pity exact when two chests replicas open one player's chests at once (compare-and-set, retried)",
    { timeout: 180_000 },
    async () => {
      const second = await startService(chestsService, tier.config as BaseConfig);
      try {
        const { playerId, chests } = await grantedChests(tier, appId, { chestTypeId: 'silver-chest', n: 40 });
        const opened = (await Promise.all(chests.map((id) => openChest(tier, appId, playerId, id)))).sort(
          (a, b) => a.fairness!.nonce - b.fairness!.nonce,
        );
        expect(opened.map((o) => o.fairness!.nonce)).toEqual(opened.map((_, i) => i));
        let counter = 0;
        for (const o of opened) {
          expect(o.pity!.opensSinceBefore).toBe(counter);
          counter = o.pity!.opensSinceAfter;
        }
        const [seed] = await chestsSql<{ next_nonce: number }>(tier, 'SELECT next_nonce FROM player_seeds WHERE player_id = $1', [playerId]);
        expect(seed!.next_nonce).toBe(40);
        const [pity] = await chestsSql<{ opens_since: number }>(
          tier,
          "SELECT opens_since FROM pity_counters WHERE player_id = $1 AND pity_group = 'silver-chest'",
          [playerId],
        );
        expect(pity!.opens_since).toBe(counter);
      } finally {
        await second.stop();
      }
    },
  );

  it('commits to the hash of the seed, never of an outcome, and keeps the seed encrypted at rest', async () => {
    const { playerId, chests } = await grantedChests(tier, appId);
    const f = await tier.bus.request(GetFairness, {}, callOf(appId, playerId));
    const opened = await openChest(tier, appId, playerId, chests[0]!);
    // The commitment is the hash of the seed, not of anything the opening produced.
    expect(opened.fairness).toEqual({ serverSeedHash: f.serverSeedHash, clientSeed: f.clientSeed, nonce: 0 });
    expect(JSON.stringify(opened)).not.toMatch(/serverSeed"/);
    const seeds = await chestsSql<{ server_seed_encrypted: string; server_seed_hash: string }>(
      tier,
      'SELECT server_seed_encrypted, server_seed_hash FROM player_seeds WHERE player_id = $1',
      [playerId],
    );
    // At rest the seed is encrypted: nothing stored is the seed whose hash was published.
    expect(seeds[0]!.server_seed_encrypted).toMatch(/^v1\./);
    expect(seeds[0]!.server_seed_encrypted).not.toContain(f.serverSeedHash);
  });

  it("shows the pity counters, and the caller's odds raised by soft pity, computed by the roll's code", async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { chestTypeId: 'abyssal-chest' });
    const ctx = () => callOf(appId, playerId);
    const pity = await tier.bus.request(ListPity, {}, ctx());
    expect(pity.groups.map((g) => g.group).sort()).toEqual(['abyssal-chest', 'silver-chest']);
    expect(pity.groups.find((g) => g.group === 'abyssal-chest')).toMatchObject({ opensSince: 0, hard: 15, guaranteedWithin: 15 });
    const abyssal = types['abyssal-chest']!;
    const disclosed = await tier.bus.request(GetChestOdds, { chestTypeId: abyssal }, ctx());
    const playerOdds = () => tier.bus.request(GetPlayerOdds, { chestTypeId: abyssal }, ctx());
    const base = await playerOdds();
    expect(base).toMatchObject({ opensSincePity: 0, guaranteedWithin: 15 });
    const legendary = (o: { rarities: { rarity: string; probability: number }[] }) => o.rarities.find((r) => r.rarity === 'legendary')!.probability;
    expect(legendary(base)).toBe(legendary(disclosed));
    // 8 openings without a legendary: 4 steps of soft pity (0.05 each) raise every slot's legendary share.
    await chestsSql(
      tier,
      `INSERT INTO pity_counters (app_id, player_id, pity_group, opens_since, rarity, hard) VALUES ($1, $2, 'abyssal-chest', 8, 'legendary', 15)`,
      [appId, playerId],
    );
    const raised = await playerOdds();
    expect(raised).toMatchObject({ opensSincePity: 8, guaranteedWithin: 7 });
    expect(legendary(raised)).toBeGreaterThan(legendary(disclosed) + 0.15);
    expect(await tier.bus.request(GetChestOdds, { chestTypeId: abyssal }, ctx())).toEqual(disclosed);
    const opened = await openChest(tier, appId, playerId, chests[0]!);
    expect(opened.pity).toMatchObject({ opensSinceBefore: 8, triggered: false });
  });
});

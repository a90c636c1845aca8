import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type BaseConfig } from '@ccs/shared';
import { ChestsConfigSchema } from '../src/config.js';
import { chestsService } from '../src/service.js';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';
import { appIdOf, defaultCatalogIds, get, grantChests, inventory, open, registerPlayer, sql, type Player } from './support/chests.js';

const VERIFY = fileURLToPath(new URL('../../../scripts/verify-opening.mjs', import.meta.url));

interface Opened {
  chestTypeSlug: string;
  body: {
    data: { collectibles: { id: string; attributes: { rarity: string } }[] };
    meta: {
      opening_id: string;
      pity: { rarity: string; opens_since_before: number; opens_since_after: number; triggered: boolean } | null;
      fairness: { server_seed_hash: string; client_seed: string; nonce: number };
    };
  };
}

describe('verifiable randomness and pity, through the gateway', () => {
  let stack: TestStack;
  let ids: Record<string, string>;
  beforeAll(async () => {
    stack = await startStack();
    ids = await defaultCatalogIds(stack);
  });
  afterAll(async () => stack?.close());

  const send = (p: Player, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    stack.inject({ method, url, headers: jsonApiHeaders(p.apiKey, p.token), ...(payload ? { payload } : {}) });

  const grant = (p: Player, slug: string, n: number) => grantChests(stack, p, slug, n);

  /** Opens chests a few at a time (one player's openings are serialised by the service anyway). */
  async function openAll(p: Player, slug: string, chests: string[]): Promise<Opened[]> {
    const out: Opened[] = [];
    for (let i = 0; i < chests.length; i += 5) {
      const answers = await Promise.all(chests.slice(i, i + 5).map((id) => open(stack, p, id)));
      for (const r of answers) {
        expect(r.statusCode, r.body).toBe(200);
        out.push({ chestTypeSlug: slug, body: r.json() });
      }
    }
    return out;
  }

  it(
    'recomputes 1,000 openings across seed rotations, with pity in play, with scripts/verify-opening.mjs: all identical',
    { timeout: 300_000 },
    async () => {
      const p = await registerPlayer(stack);
      const openings: Opened[] = [];
      const revealed = new Map<string, string>();
      const rotate = async (clientSeed?: string) => {
        const res = clientSeed
          ? await send(p, 'PATCH', '/api/v1/players/me/fairness', { data: { type: 'fairness', attributes: { client_seed: clientSeed } } })
          : await send(p, 'POST', '/api/v1/players/me/fairness/rotate');
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json();
        expectJsonApi(body);
        revealed.set(body.meta.revealed.server_seed_hash, body.meta.revealed.server_seed);
        return body;
      };
      const before = (await send(p, 'GET', '/api/v1/players/me/fairness')).json().data.attributes;
      expect(before).toMatchObject({ nonce: 0, algorithm: 'hmac-sha256-48bit-v1' });
      for (let round = 0; round < 20; round++) {
        // Silver (hard pity at 10) and Abyssal (soft pity from 5, hard at 15) in turn.
        const slug = round % 2 === 0 ? 'silver-chest' : 'abyssal-chest';
        openings.push(...(await openAll(p, slug, await grant(p, slug, 50))));
        if (round % 5 === 4) await rotate(round === 9 ? `client-${round}` : undefined);
      }
      await rotate();
      expect(openings).toHaveLength(1000);

      // Pity never exceeded: a counter stays below hard, and resets exactly when the rarity drops.
      // Openings sent together run in the order the service serialised them: seed pair, then nonce.
      const seedOrder = [...new Set(openings.map((o) => o.body.meta.fairness.server_seed_hash))];
      const position = (o: Opened) => seedOrder.indexOf(o.body.meta.fairness.server_seed_hash) * 1e6 + o.body.meta.fairness.nonce;
      const inOrder = [...openings].sort((a, b) => position(a) - position(b));
      for (const slug of ['silver-chest', 'abyssal-chest']) {
        const hard = slug === 'silver-chest' ? 10 : 15;
        let counter = 0;
        for (const o of inOrder.filter((x) => x.chestTypeSlug === slug)) {
          const pity = o.body.meta.pity!;
          const legendary = o.body.data.collectibles.some((c) => c.attributes.rarity === 'legendary');
          expect(pity.opens_since_before).toBe(counter);
          expect(pity.opens_since_before).toBeLessThan(hard);
          expect(pity.triggered).toBe(counter === hard - 1);
          if (pity.triggered) expect(legendary).toBe(true);
          counter = legendary ? 0 : counter + 1;
          expect(pity.opens_since_after).toBe(counter);
        }
      }
      // Nonces run 0, 1, 2, … within each seed pair.
      const bySeed = new Map<string, number[]>();
      for (const o of openings)
        bySeed.set(o.body.meta.fairness.server_seed_hash, [...(bySeed.get(o.body.meta.fairness.server_seed_hash) ?? []), o.body.meta.fairness.nonce]);
      expect(bySeed.size).toBe(4);
      for (const nonces of bySeed.values()) expect(nonces.sort((a, b) => a - b)).toEqual(nonces.map((_, i) => i));

      // The independent script recomputes every opening from public documents and the revealed seeds.
      const odds = Object.fromEntries(
        await Promise.all(
          ['silver-chest', 'abyssal-chest'].map(async (slug) => {
            const res = await get(stack, `/api/v1/chests/${ids[slug === 'silver-chest' ? 'Silver Chest' : 'Abyssal Chest']}/odds?rules_version=1`);
            expect(res.statusCode, res.body).toBe(200);
            return [slug, res.json()];
          }),
        ),
      );
      const cases = openings.map((o) => ({
        odds: odds[o.chestTypeSlug],
        server_seed: revealed.get(o.body.meta.fairness.server_seed_hash),
        server_seed_hash: o.body.meta.fairness.server_seed_hash,
        client_seed: o.body.meta.fairness.client_seed,
        nonce: o.body.meta.fairness.nonce,
        opens_since_before: o.body.meta.pity!.opens_since_before,
        expect: o.body,
      }));
      expect(cases.every((c) => c.server_seed)).toBe(true);
      const dir = await mkdtemp(join(tmpdir(), 'ccs-verify-'));
      try {
        await writeFile(join(dir, 'cases.json'), JSON.stringify(cases));
        const { stdout } = await promisify(execFile)(process.execPath, [VERIFY, '--batch', join(dir, 'cases.json')], { maxBuffer: 64 * 1024 * 1024 });
        const lines = stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(lines.at(-1)).toEqual({ cases: 1000, failed: 0 });
        expect(lines.slice(0, -1).every((l) => l.matches === true && l.commitment_ok === true)).toBe(true);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }

      // The service's own verification agrees, on a sample.
      for (const o of openings.filter((_, i) => i % 100 === 7)) {
        const res = await send(p, 'GET', `/api/v1/openings/${o.body.meta.opening_id}/verification`);
        expect(res.statusCode, res.body).toBe(200);
        expectJsonApi(res.json());
        expect(res.json().data.attributes).toMatchObject({
          matches: true,
          nonce: o.body.meta.fairness.nonce,
          server_seed_hash: o.body.meta.fairness.server_seed_hash,
        });
      }
    },
  );

  it(
    "keeps nonces and pity exact when two chests replicas open one player's chests at once (compare-and-set, retried)",
    { timeout: 60_000 },
    async () => {
      const second = await startService(chestsService, ChestsConfigSchema.parse(stack.env) as BaseConfig);
      try {
        const p = await registerPlayer(stack);
        const chests = await grant(p, 'silver-chest', 40);
        const answers = await Promise.all(chests.map((id) => open(stack, p, id)));
        for (const r of answers) expect(r.statusCode, r.body).toBe(200);
        const opened = answers.map((r) => r.json()).sort((a, b) => a.meta.fairness.nonce - b.meta.fairness.nonce);
        expect(opened.map((o) => o.meta.fairness.nonce)).toEqual(opened.map((_, i) => i));
        let counter = 0;
        for (const o of opened) {
          expect(o.meta.pity.opens_since_before).toBe(counter);
          counter = o.meta.pity.opens_since_after;
        }
        const [seed] = await sql<{ next_nonce: number }>(stack, 'SELECT next_nonce FROM chests.player_seeds WHERE player_id = $1', [p.id]);
        expect(seed!.next_nonce).toBe(40);
        const [pity] = await sql<{ opens_since: number }>(
          stack,
          "SELECT opens_since FROM chests.pity_counters WHERE player_id = $1 AND pity_group = 'silver-chest'",
          [p.id],
        );
        expect(pity!.opens_since).toBe(counter);
      } finally {
        await second.stop();
      }
    },
  );

  it('commits to the hash of the seed, never of an outcome, and keeps the seed encrypted at rest', async () => {
    const p = await registerPlayer(stack);
    const f = (await send(p, 'GET', '/api/v1/players/me/fairness')).json().data.attributes;
    const [chest] = await grant(p, 'wooden-chest', 1);
    const opened = (await open(stack, p, chest!)).json();
    // The commitment is the hash of the seed, not of anything the opening produced.
    expect(opened.meta.fairness).toEqual({ server_seed_hash: f.server_seed_hash, client_seed: f.client_seed, nonce: 0 });
    expect(JSON.stringify(opened)).not.toMatch(/server_seed"/);
    const seeds = await sql<{ server_seed_encrypted: string; server_seed_hash: string }>(
      stack,
      'SELECT server_seed_encrypted, server_seed_hash FROM chests.player_seeds WHERE player_id = $1',
      [p.id],
    );
    // At rest the seed is encrypted: nothing stored is the seed whose hash was published.
    expect(seeds[0]!.server_seed_encrypted).toMatch(/^v1\./);
    expect(seeds[0]!.server_seed_encrypted).not.toContain(f.server_seed_hash);
  });

  it('answers 409 seed_not_revealed before the rotation, 404 for an opening of another player, 422 for a bad client seed', async () => {
    const p = await registerPlayer(stack);
    const q = await registerPlayer(stack);
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(1));
    const opened = (await open(stack, p, p.starterChestId)).json();
    expectError(await send(p, 'GET', `/api/v1/openings/${opened.meta.opening_id}/verification`), 409, 'seed_not_revealed');
    expectError(await send(q, 'GET', `/api/v1/openings/${opened.meta.opening_id}/verification`), 404, 'opening_not_found');
    expectError(await send(p, 'GET', '/api/v1/openings/not-a-uuid/verification'), 400, 'invalid_id');
    for (const bad of ['', 'has space', 'x'.repeat(65), 'semi;colon']) {
      const errors = expectError(
        await send(p, 'PATCH', '/api/v1/players/me/fairness', { data: { type: 'fairness', attributes: { client_seed: bad } } }),
        422,
      );
      expect(errors[0]!.source?.pointer).toBe('/data/attributes/client_seed');
    }
    // Nothing changed: the pair is the same and still unrevealed.
    const rotated = (await send(p, 'POST', '/api/v1/players/me/fairness/rotate')).json();
    expect(rotated.meta.revealed).toMatchObject({ server_seed_hash: opened.meta.fairness.server_seed_hash, last_nonce: 0 });
    const v = (await send(p, 'GET', `/api/v1/openings/${opened.meta.opening_id}/verification`)).json();
    expect(v.data.attributes.matches).toBe(true);
    // Without a token: 401.
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/players/me/fairness', headers: { apikey: stack.apiKey } }), 401);
  });

  it("shows the pity counters, and the caller's odds raised by soft pity, computed by the roll's code", async () => {
    const p = await registerPlayer(stack);
    const pity = (await send(p, 'GET', '/api/v1/players/me/pity')).json();
    expectJsonApi(pity);
    expect(pity.data.map((g: { id: string }) => g.id).sort()).toEqual(['abyssal-chest', 'silver-chest']);
    expect(pity.data.find((g: { id: string }) => g.id === 'abyssal-chest').attributes).toMatchObject({
      opens_since: 0,
      hard: 15,
      guaranteed_within: 15,
    });
    const odds = async () => (await send(p, 'GET', `/api/v1/chests/${ids['Abyssal Chest']}/odds`)).json();
    const base = await odds();
    expect(base.meta.player).toMatchObject({ opens_since_pity: 0, guaranteed_within: 15 });
    const legendary = (o: { rarities: { rarity: string; probability: number }[] }) => o.rarities.find((r) => r.rarity === 'legendary')!.probability;
    expect(legendary(base.meta.player)).toBe(legendary(base.data.attributes));
    // 8 openings without a legendary: 4 steps of soft pity (0.05 each) raise every slot's legendary share.
    const appId = await appIdOf(stack);
    await sql(
      stack,
      `INSERT INTO chests.pity_counters (app_id, player_id, pity_group, opens_since, rarity, hard) VALUES ($1, $2, 'abyssal-chest', 8, 'legendary', 15)`,
      [appId, p.id],
    );
    const raised = await odds();
    expect(raised.meta.player).toMatchObject({ opens_since_pity: 8, guaranteed_within: 7 });
    expect(legendary(raised.meta.player)).toBeGreaterThan(legendary(base.data.attributes) + 0.15);
    expect(raised.data.attributes).toEqual(base.data.attributes);
    const [chest] = await grant(p, 'abyssal-chest', 1);
    const opened = (await open(stack, p, chest!)).json();
    expect(opened.meta.pity).toMatchObject({ opens_since_before: 8, triggered: false });
  });
});

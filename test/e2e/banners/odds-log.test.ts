import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminLoadContent, readContentFile, type AppContent } from '@ccs/shared';
import { withoutOddsNotice } from '@ccs/shared/testing';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import { createApp, get, registerPlayer, sql, studioGrant, type Player } from '../../../services/chests/test/support/chests.js';

const VERIFIER = fileURLToPath(new URL('../../../scripts/verify-opening.mjs', import.meta.url));
const HOUR = 3_600_000;
const BANNER = 'kraken-rising';

type Entry = { id: string; attributes: Record<string, string | number> };
type Pulled = { collectibles: { id: string; attributes: { rarity: string } }[]; meta: { opening_id: string; banner: { featured: boolean } } };

/** The demo content, its banner running now, with `hours` of odds change notice (0: none). */
function contentWith(hours: number): AppContent {
  const c = withoutOddsNotice(structuredClone(readContentFile()));
  if (hours) c.compliance = { ...c.compliance!, odds_change_notice_hours: hours };
  const b = c.banners!.find((x) => x.slug === BANNER)!;
  b.starts_at = new Date(Date.now() - 24 * HOUR).toISOString().replace(/\.\d{3}Z$/, 'Z');
  b.ends_at = new Date(Date.now() + 30 * 24 * HOUR).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return c;
}

/** `base` with the banner's featured share set (its name changed too: presentation, not rules). */
function withShare(base: AppContent, share: number): AppContent {
  const c = structuredClone(base);
  const b = c.banners!.find((x) => x.slug === BANNER)!;
  b.featured = { ...b.featured, share };
  b.name = `Kraken Rising at ${share}`;
  return c;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

// A banner's rules in the odds log and under the odds change notice period (docs/fairness.md, "The
// odds log"; docs/content.md, "Banners"), through the running stack: the demo banner kraken-rising
// (a 50/50 on sea-kraken with the guarantee, on the Abyssal Chest, legendary pity at 15).
describe("a banner's rules in the odds log and the notice period", () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  const read = async (url: string, apiKey: string, token?: string) => {
    const res = await get(stack, url, token, apiKey);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return body;
  };

  /** The app's odds log once it holds `n` entries (chests applies a load moments after it). */
  const logWith = (apiKey: string, n: number) =>
    eventually(async () => {
      const body = await read('/api/v1/odds-log?page[limit]=100', apiKey);
      expect(body.meta.total_count).toBe(n);
      expect(body.data).toHaveLength(n);
      return body as { data: Entry[] };
    }, 20_000);

  const load = async (appId: string, content: AppContent) => {
    const before = Date.now();
    const { version } = await stack.bus.request(AdminLoadContent, { appId, content }, { requestId: randomUUID() });
    return { version, before };
  };

  const pull = (p: Player, count: number) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/banners/${BANNER}/pull`,
      headers: jsonApiHeaders(p.apiKey, p.token),
      payload: { data: { type: 'pull', attributes: { count, currency: 'coins' } } },
    });

  /** One pull with the player's standing set so that its legendary is certain (pity 14 of 15) and the guarantee unset: only the share decides. */
  async function legendaryPull(appId: string, p: Player): Promise<Pulled> {
    await sql(
      stack,
      `INSERT INTO chests.banner_standings (app_id, player_id, pity_group, guaranteed_featured, opens_since) VALUES ($1, $2, $3, false, 14)
       ON CONFLICT (app_id, player_id, pity_group) DO UPDATE SET guaranteed_featured = false, opens_since = 14`,
      [appId, p.id, BANNER],
    );
    const res = await pull(p, 1);
    expect(res.statusCode, res.body).toBe(200);
    const o = (res.json() as { data: Pulled[] }).data[0]!;
    expect(o.collectibles.some((c) => c.attributes.rarity === 'legendary')).toBe(true);
    return o;
  }

  /** Whether an opening's every legendary is the featured sea-kraken. */
  const allFeatured = (o: Pulled) => o.collectibles.filter((c) => c.attributes.rarity === 'legendary').every((c) => c.id === 'sea-kraken');

  /** The banner as GET /banners/{id}, the list and the odds document show it, once its meta.odds_change reads as `expected`. */
  const bannerReads = (apiKey: string, expected: unknown) =>
    eventually(async () => {
      const one = await read(`/api/v1/banners/${BANNER}`, apiKey);
      expect(one.data.meta.odds_change).toEqual(expected);
      const list = await read('/api/v1/banners', apiKey);
      expect(list.data.find((b: { id: string }) => b.id === BANNER).meta.odds_change).toEqual(expected);
      const odds = await read(`/api/v1/banners/${BANNER}/odds`, apiKey);
      expect(odds.meta.odds_change).toEqual(expected);
      return { banner: one.data, odds: odds.data };
    });

  it("holds a change of a banner's share for the notice period: the old share rolls and is disclosed, the change is announced, then the new share rolls", async () => {
    const v1 = contentWith(24);
    const app = await createApp(stack, v1);
    const key = app.publishableKey;
    const first = await logWith(key, v1.chests.length + 1);
    const logged = first.data.at(-1)!.attributes;
    expect(logged).toMatchObject({ banner_id: BANNER, rules_version: 1 });
    expect(logged.chest_type_id).toBeUndefined();
    const p = await registerPlayer(stack, key);
    await studioGrant(stack, p, 'coins', '1000000');

    // Version 2 makes every legendary featured (share 1): announced 24 hours ahead.
    const l2 = await load(app.appId, withShare(v1, 1));
    const entry = (await logWith(key, v1.chests.length + 2)).data.at(-1)!.attributes;
    expect(entry).toMatchObject({ banner_id: BANNER, rules_version: l2.version });
    expect(Date.parse(String(entry.effective_at))).toBeGreaterThanOrEqual(l2.before + 24 * HOUR);
    const announced = { effective_at: entry.effective_at, rules_version: l2.version };
    const during = await bannerReads(key, announced);
    // The name applies at once; the rules in force (and disclosed) are still version 1's.
    expect(during.banner.attributes).toMatchObject({ name: 'Kraken Rising at 1', featured: { share: 0.5 } });
    expect(during.odds.attributes).toMatchObject({ banner_rules_version: 1, featured: { share: 0.5 }, banner_rules: { featured: { share: 0.5 } } });
    expect(sha256(canonical(during.odds.attributes.banner_rules))).toBe(logged.rules_sha256);

    // Pulls roll the 50/50 still: with the legendary certain and no guarantee, an off-banner one comes (1 in 2 a pull).
    let lost: Pulled | undefined;
    for (let i = 0; i < 20 && !lost; i++) {
      const o = await legendaryPull(app.appId, p);
      if (!allFeatured(o)) lost = o;
    }
    expect(lost, 'no off-banner legendary in 20 pulls at the old share (chance 1 in a million)').toBeDefined();

    // The effective time brought forward to a few seconds from now (the log keeps its entry).
    const [row] = await sql<{ at: Date }>(
      stack,
      `UPDATE chests.banner_rules SET pending_effective_at = now() + interval '3 seconds'
        WHERE app_id = $1 AND banner_id = $2 AND pending_version = $3 RETURNING pending_effective_at AS at`,
      [app.appId, BANNER, l2.version],
    );
    expect(row).toBeDefined();
    await new Promise((r) => setTimeout(r, Math.max(0, row!.at.getTime() - Date.now()) + 100));
    const after = await bannerReads(key, undefined);
    expect(after.odds.attributes).toMatchObject({ banner_rules_version: l2.version, featured: { share: 1 } });
    expect(sha256(canonical(after.odds.attributes.banner_rules))).toBe(entry.rules_sha256);
    for (let i = 0; i < 3; i++) expect(allFeatured(await legendaryPull(app.appId, p))).toBe(true);

    // The server's verification re-rolls the pull made in the notice period with the rules it had in force.
    const headers = jsonApiHeaders(key, p.token);
    expect((await stack.inject({ method: 'POST', url: '/api/v1/players/me/fairness/rotate', headers })).statusCode).toBe(200);
    const v = await stack.inject({ method: 'GET', url: `/api/v1/openings/${lost!.meta.opening_id}/verification`, headers });
    expect(v.statusCode, v.body).toBe(200);
    expect(v.json().data.attributes.matches).toBe(true);
  });

  it('logs a new banner at once whatever the notice, chains its entry as documented, and the offline verifier accepts it and refuses it edited', async () => {
    const v1 = contentWith(24);
    const app = await createApp(stack, v1);
    const key = app.publishableKey;
    const log = await logWith(key, v1.chests.length + 1);
    let previous = '0'.repeat(64);
    for (const e of log.data) {
      const a = e.attributes;
      const subject = a.banner_id === undefined ? a.chest_type_id : `banner:${a.banner_id}:`;
      expect(a.entry_hash).toBe(sha256(`${previous}${a.rules_sha256}${subject}${a.rules_version}${a.effective_at}`));
      previous = String(a.entry_hash);
    }
    const banner = log.data.find((e) => e.attributes.banner_id === BANNER)!;
    expect(Date.parse(String(banner.attributes.effective_at))).toBeLessThanOrEqual(Date.now());

    const dir = await mkdtemp(join(tmpdir(), 'banner-odds-log-'));
    try {
      await writeFile(join(dir, 'log.json'), JSON.stringify(log));
      await writeFile(join(dir, `banner-${BANNER}.1.json`), JSON.stringify(await read(`/api/v1/banners/${BANNER}/odds`, key)));
      for (const e of log.data.filter((x) => x.attributes.chest_type_id !== undefined)) {
        const doc = await read(`/api/v1/chests/${e.attributes.chest_type_id}/odds?rules_version=${e.attributes.rules_version}`, key);
        await writeFile(join(dir, `${e.attributes.chest_type_id}.${e.attributes.rules_version}.json`), JSON.stringify(doc));
      }
      const verifier = (file: string) =>
        spawnSync(process.execPath, [VERIFIER, '--odds-log', join(dir, file), '--odds-dir', dir], { encoding: 'utf8' });
      const ok = verifier('log.json');
      expect(ok.status, ok.stderr).toBe(0);
      const n = log.data.length;
      expect(JSON.parse(ok.stdout)).toEqual({ entries: n, verified: n, broken: [], rules_checked: n });

      // The banner entry edited: its banner renamed, or presented as a chest entry, breaks the chain there.
      const seq = Number(banner.id);
      for (const edit of [
        (a: Record<string, unknown>) => void (a.banner_id = 'another-banner'),
        (a: Record<string, unknown>) => {
          a.chest_type_id = a.banner_id;
          delete a.banner_id;
        },
      ]) {
        const edited = structuredClone(log);
        edit(edited.data[seq - 1]!.attributes);
        await writeFile(join(dir, 'edited.json'), JSON.stringify(edited));
        const bad = verifier('edited.json');
        expect(bad.status).toBe(1);
        expect(JSON.parse(bad.stdout).broken[0].seq).toBe(seq);
        expect(bad.stderr).toMatch(new RegExp(`chain is broken at entry ${seq}`));
      }
      // The banner's disclosed rules edited: its rules hash no longer holds.
      const doc = await read(`/api/v1/banners/${BANNER}/odds`, key);
      doc.data.attributes.banner_rules.featured.share = 1;
      await writeFile(join(dir, `banner-${BANNER}.1.json`), JSON.stringify(doc));
      const wrongRules = verifier('log.json');
      expect(wrongRules.status).toBe(1);
      expect(JSON.parse(wrongRules.stdout).broken).toEqual([{ seq, problems: ['rules_sha256 is not SHA-256 of the published rules'] }]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** JSON with every object's keys sorted, recursively (what rules_sha256 hashes). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

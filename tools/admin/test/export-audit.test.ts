import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectJsonApi } from '../../../test/support/jsonapi-schema.js';
import { appIdOf, createApp, inventory, open, registerPlayer, studioGrant, type Player } from '../../../services/chests/test/support/chests.js';
import { AdminLoadContent, readContentFile } from '@ccs/shared';
import { withoutOddsNotice } from '@ccs/shared/testing';
import { runAdminIn } from './support/run-admin.js';

const VERIFY = fileURLToPath(new URL('../../../scripts/verify-opening.mjs', import.meta.url));

/** scripts/verify-opening.mjs --audit <dir> as an auditor runs it: exit code, stdout, stderr. */
function verifyAudit(dir: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [VERIFY, '--audit', dir], (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Rewrites one file of an export copy, and (unless told not to) its SHA-256 in the manifest, as a forger would. */
function tamper(dir: string, name: string, change: (text: string) => string, { updateManifest = true } = {}) {
  const file = path.join(dir, name);
  writeFileSync(file, change(readFileSync(file, 'utf8')));
  if (!updateManifest) return;
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  manifest.files[name].sha256 = sha256(file);
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

describe("the auditor's export (admin export-audit, verify-opening.mjs --audit)", () => {
  let stack: TestStack;
  let root: string;
  let appId: string;
  let exported: string;
  const start = new Date(Date.now() - 1000).toISOString();

  /** Opens every unopened chest of the player through the gateway; answers how many. */
  async function openAll(p: Player): Promise<number> {
    const chests = (await inventory(stack, p)).data.filter((c: { attributes: { opened_at?: string | null } }) => !c.attributes.opened_at);
    for (const c of chests) {
      const res = await open(stack, p, c.id);
      expect(res.statusCode, res.body).toBe(200);
    }
    return chests.length;
  }

  beforeAll(async () => {
    stack = await startStack();
    root = mkdtempSync(path.join(tmpdir(), 'ccs-audit-'));
    appId = await appIdOf(stack);
    // Ada opens her starter chest and four granted ones, then rotates her seed (revealing it);
    // Bob opens his starter chest and keeps his seed in use.
    const ada = await registerPlayer(stack);
    const bob = await registerPlayer(stack);
    const grant = await runAdminIn(stack, ['grant-chests', '--app', appId, '--player', ada.id, '--chest', 'wooden-chest', '--quantity', '4']);
    expect(grant.code, grant.err).toBe(0);
    await eventually(async () => expect((await inventory(stack, ada)).meta.total_chests).toBe(5), 20_000);
    await eventually(async () => expect((await inventory(stack, bob)).meta.total_chests).toBe(1), 20_000);
    expect(await openAll(ada)).toBe(5);
    expect(await openAll(bob)).toBe(1);
    const rotated = await stack.inject({ method: 'POST', url: '/api/v1/players/me/fairness/rotate', headers: jsonApiHeaders(ada.apiKey, ada.token) });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expectJsonApi(rotated.json());
    exported = path.join(root, 'export');
    const r = await runAdminIn(stack, [
      'export-audit',
      '--app',
      appId,
      '--from',
      start,
      '--to',
      new Date(Date.now() + 60_000).toISOString(),
      '--out',
      exported,
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^Exported 6 opening\(s\) of app \S+ \(5 with revealed seeds, 1 not revealed yet\)/);
    expect(r.out).toContain(`node scripts/verify-opening.mjs --audit ${exported}`);
  }, 120_000);
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
    await stack?.close();
  });

  it('writes the openings, their rules, the odds log and a manifest of counts and SHA-256s; the verifier re-rolls them all: exit 0', async () => {
    const manifest = JSON.parse(readFileSync(path.join(exported, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      format: 'ccs-audit-export/2',
      app_id: appId,
      counts: { openings: 6, revealed: 5, unrevealed: 1, without_fairness: 0, rules_missing: 0 },
    });
    for (const name of ['openings.jsonl', 'rules.jsonl', 'odds-log.json', 'store-transactions.jsonl'])
      expect(manifest.files[name].sha256).toBe(sha256(path.join(exported, name)));
    const openings = readFileSync(path.join(exported, 'openings.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(openings).toHaveLength(6);
    // Oldest first; the revealed ones carry the seed whose SHA-256 is their commitment; the other none.
    expect(openings.map((o) => o.opened_at)).toEqual([...openings.map((o) => o.opened_at)].sort());
    for (const o of openings.filter((x) => x.revealed))
      expect(createHash('sha256').update(Buffer.from(o.server_seed, 'hex')).digest('hex')).toBe(o.server_seed_hash);
    expect(openings.filter((o) => !o.revealed)).toMatchObject([{ server_seed: null, server_seed_hash: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(openings[0]).toMatchObject({ rules_version: 1, items: expect.arrayContaining([expect.objectContaining({ slot: 0 })]) });
    const log = JSON.parse(readFileSync(path.join(exported, 'odds-log.json'), 'utf8'));
    expect(log.length).toBe(manifest.counts.odds_log_entries);
    expect(log[0]).toMatchObject({ seq: 1, previous_hash: '0'.repeat(64) });

    const v = await verifyAudit(exported);
    expect(v.code, v.err).toBe(0);
    expect(v.out).toContain('manifest: 4 files, SHA-256 as listed');
    expect(v.out).toMatch(/openings: 6\n {2}verified: 5\n {2}unverifiable \(seed not revealed\): 1\n {2}mismatched: 0\n/);
    expect(v.out).toMatch(new RegExp(`odds log: ${log.length} entries, chain verifies \\(${log.length} rules hashes checked\\)`));
  });

  it("a banner pull's openings export with the banner's rules and record, and re-roll verified; a changed featured verdict is mismatched", async () => {
    const cy = await registerPlayer(stack);
    await studioGrant(stack, cy, 'coins', '100000');
    // The period holds Cy's pulls alone (the other players opened theirs seconds before).
    const from = new Date().toISOString();
    const pull = await stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/pull',
      headers: jsonApiHeaders(cy.apiKey, cy.token),
      payload: { data: { type: 'pull', attributes: { count: 10, currency: 'coins' } } },
    });
    expect(pull.statusCode, pull.body).toBe(200);
    const rotated = await stack.inject({ method: 'POST', url: '/api/v1/players/me/fairness/rotate', headers: jsonApiHeaders(cy.apiKey, cy.token) });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const dir = path.join(root, 'banner-export');
    const r = await runAdminIn(stack, [
      'export-audit',
      '--app',
      appId,
      '--from',
      from,
      '--to',
      new Date(Date.now() + 60_000).toISOString(),
      '--out',
      dir,
    ]);
    expect(r.code, r.err).toBe(0);
    const lines = readFileSync(path.join(dir, 'openings.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(10);
    for (const l of lines) {
      expect(l.banner).toMatchObject({
        id: 'kraken-rising',
        rules: { guarantee: true, ten_pull_floor: 'legendary', featured: { collectibles: ['sea-kraken'] } },
      });
    }
    const v = await verifyAudit(dir);
    expect(v.code, v.out + v.err).toBe(0);
    expect(v.out).toMatch(/openings: 10\n {2}verified: 10\n {2}unverifiable \(seed not revealed\): 0\n {2}mismatched: 0\n/);
    const forged = path.join(root, 'banner-forged');
    cpSync(dir, forged, { recursive: true });
    tamper(forged, 'openings.jsonl', (text) => {
      const all = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      all[0].banner.featured = !all[0].banner.featured;
      return all.map((l) => JSON.stringify(l)).join('\n') + '\n';
    });
    const bad = await verifyAudit(forged);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/mismatched: 1\n/);
  });

  it("a banner pull made while a change of the banner's rules waited out its notice exports the logged rules it rolled and verifies; other rules are mismatched", async () => {
    // An app of its own: its banner running now, 24 hours of notice; version 2 raises the share to 1.
    const content = withoutOddsNotice(structuredClone(readContentFile()));
    content.compliance = { ...content.compliance!, odds_change_notice_hours: 24 };
    const banner = content.banners!.find((b) => b.slug === 'kraken-rising')!;
    banner.starts_at = new Date(Date.now() - 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const app = await createApp(stack, content);
    const next = structuredClone(content);
    next.banners!.find((b) => b.slug === 'kraken-rising')!.featured.share = 1;
    const from = new Date().toISOString();
    const { version } = await stack.bus.request(AdminLoadContent, { appId: app.appId, content: next }, { requestId: randomUUID() });
    const dee = await registerPlayer(stack, app.publishableKey);
    await studioGrant(stack, dee, 'coins', '100000');
    const headers = jsonApiHeaders(app.publishableKey, dee.token);
    const pull = await eventually(async () => {
      // The load applied: the banner announces the change.
      const b = await stack.inject({ method: 'GET', url: '/api/v1/banners/kraken-rising', headers });
      expect(b.json().data.meta.odds_change).toMatchObject({ rules_version: version });
      return stack.inject({
        method: 'POST',
        url: '/api/v1/banners/kraken-rising/pull',
        headers,
        payload: { data: { type: 'pull', attributes: { count: 10, currency: 'coins' } } },
      });
    }, 20_000);
    expect(pull.statusCode, pull.body).toBe(200);
    expect((await stack.inject({ method: 'POST', url: '/api/v1/players/me/fairness/rotate', headers })).statusCode).toBe(200);
    const dir = path.join(root, 'banner-notice');
    const r = await runAdminIn(stack, [
      'export-audit',
      '--app',
      app.appId,
      '--from',
      from,
      '--to',
      new Date(Date.now() + 60_000).toISOString(),
      '--out',
      dir,
    ]);
    expect(r.code, r.err).toBe(0);
    const read = (name: string) =>
      readFileSync(path.join(dir, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    const lines = read('openings.jsonl');
    expect(lines).toHaveLength(10);
    for (const l of lines)
      expect(l.banner).toMatchObject({ id: 'kraken-rising', rules_version: 1, rules: { featured: { share: 0.5 }, pity_group: 'kraken-rising' } });
    // rules.jsonl carries the banner's rules of both logged versions.
    expect(
      read('rules.jsonl')
        .filter((x) => x.banner_id === 'kraken-rising')
        .map((x) => [x.rules_version, x.rules.featured.share]),
    ).toEqual([
      [1, 0.5],
      [version, 1],
    ]);
    const log = JSON.parse(readFileSync(path.join(dir, 'odds-log.json'), 'utf8'));
    expect(log.filter((e: { banner_id?: string }) => e.banner_id === 'kraken-rising')).toHaveLength(2);
    const v = await verifyAudit(dir);
    expect(v.code, v.out + v.err).toBe(0);
    expect(v.out).toMatch(/openings: 10\n {2}verified: 10\n {2}unverifiable \(seed not revealed\): 0\n {2}mismatched: 0\n/);
    expect(v.out).toContain(`odds log: ${log.length} entries, chain verifies (${log.length} rules hashes checked)`);

    // Forged: one opening claims the share it did not roll; another the version not yet in force.
    const forged = path.join(root, 'banner-notice-forged');
    cpSync(dir, forged, { recursive: true });
    tamper(forged, 'openings.jsonl', (text) => {
      const all = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      all[0].banner.rules.featured.share = 1;
      all[1].banner.rules.featured.share = 1;
      all[1].banner.rules_version = version;
      return all.map((l) => JSON.stringify(l)).join('\n') + '\n';
    });
    const bad = await verifyAudit(forged);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/verified: 8\n {2}unverifiable \(seed not revealed\): 0\n {2}mismatched: 2\n/);
    expect(bad.err).toContain('the banner rules it rolled are not those the odds log entry of banner kraken-rising version 1 hashes');
    expect(bad.err).toMatch(new RegExp(`banner kraken-rising's rules version ${version} took effect at \\S+, after the opening`));
  });

  it('an opening whose item was changed is mismatched: exit 1', async () => {
    const dir = path.join(root, 'item');
    cpSync(exported, dir, { recursive: true });
    tamper(dir, 'openings.jsonl', (text) => {
      const lines = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const o = lines.find((x) => x.revealed);
      o.items[0].collectible_id = `${o.items[0].collectible_id}-swapped`;
      return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
    });
    const v = await verifyAudit(dir);
    expect(v.code).toBe(1);
    expect(v.out).toMatch(/verified: 4\n {2}unverifiable \(seed not revealed\): 1\n {2}mismatched: 1\n/);
    expect(v.err).toMatch(/mismatched: opening [0-9a-f-]{36}: the re-rolled items differ from the exported ones/);
  });

  it('a seed that does not hash to the commitment is mismatched: exit 1', async () => {
    const dir = path.join(root, 'seed');
    cpSync(exported, dir, { recursive: true });
    tamper(dir, 'openings.jsonl', (text) => {
      const lines = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const o = lines.find((x) => x.revealed);
      o.server_seed = 'f'.repeat(64);
      return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
    });
    const v = await verifyAudit(dir);
    expect(v.code).toBe(1);
    expect(v.out).toContain('mismatched: 1');
    expect(v.err).toContain('SHA-256 of the server seed is not the committed server_seed_hash');
  });

  it('a changed odds log entry breaks the chain: exit 1', async () => {
    const dir = path.join(root, 'log');
    cpSync(exported, dir, { recursive: true });
    tamper(dir, 'odds-log.json', (text) => {
      const log = JSON.parse(text);
      log[0].effective_at = '2020-01-01T00:00:00.000Z';
      return JSON.stringify(log);
    });
    const v = await verifyAudit(dir);
    expect(v.code).toBe(1);
    expect(v.out).toContain('mismatched: 0');
    expect(v.out).toMatch(/odds log: \d+ entries, chain broken at entry 1: entry_hash is not SHA-256 of its fields/);
  });

  it('a file changed without its manifest entry is refused: exit 1', async () => {
    const dir = path.join(root, 'manifest');
    cpSync(exported, dir, { recursive: true });
    tamper(dir, 'rules.jsonl', (text) => text.replace('"drop_rate":', '"drop_rate": '), { updateManifest: false });
    const v = await verifyAudit(dir);
    expect(v.code).toBe(1);
    expect(v.out).toBe('manifest: refused: 1 file(s) not as the manifest says\n');
    expect(v.err).toContain("rules.jsonl: SHA-256 is not the manifest's (the file changed after the export)");
    // Not an export at all: exit 2.
    expect((await verifyAudit(path.join(root, 'nothing-here'))).code).toBe(2);
  });

  it('refuses an unknown app, bad dates, --to before --from and an output directory that is not empty, writing nothing', async () => {
    const out = path.join(root, 'refused');
    const base = ['export-audit', '--app', appId, '--out', out];
    const unknown = await runAdminIn(stack, ['export-audit', '--app', randomUUID(), '--from', '2026-01-01', '--to', '2026-02-01', '--out', out]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^No app [0-9a-f-]{36}\. List the apps with: npm run admin -- list-apps$/);
    const badDate = await runAdminIn(stack, [...base, '--from', '2026-02-30', '--to', '2026-03-01']);
    expect(badDate.code).toBe(2);
    expect(badDate.err).toMatch(/^--from takes a date \(2026-11-01\) or a time with its offset \(2026-11-01T12:00:00Z\), not "2026-02-30"/);
    const noOffset = await runAdminIn(stack, [...base, '--from', '2026-02-01T10:00:00', '--to', '2026-03-01']);
    expect(noOffset.code).toBe(2);
    const backwards = await runAdminIn(stack, [...base, '--from', '2026-03-01', '--to', '2026-02-01']);
    expect(backwards.code).toBe(2);
    expect(backwards.err).toMatch(/^--to \(2026-02-02T00:00:00.000Z\) is not after --from \(2026-03-01T00:00:00.000Z\)/);
    const missing = await runAdminIn(stack, ['export-audit', '--app', appId, '--from', '2026-03-01', '--to', '2026-04-01']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^missing --out/);
    expect(() => readFileSync(path.join(out, 'manifest.json'))).toThrow();
    mkdirSync(out);
    writeFileSync(path.join(out, 'notes.txt'), 'mine');
    const notEmpty = await runAdminIn(stack, [...base, '--from', '2026-03-01', '--to', '2026-04-01']);
    expect(notEmpty.code).toBe(1);
    expect(notEmpty.err).toMatch(/^--out \S+ is not empty \(1 entry\): give a new or empty directory; an export never overwrites files\.$/);
    // A period without openings exports an empty, verifiable set.
    const empty = path.join(root, 'empty');
    const none = await runAdminIn(stack, ['export-audit', '--app', appId, '--from', '2020-01-01', '--to', '2020-01-31', '--out', empty, '--json']);
    expect(none.code, none.err).toBe(0);
    expect(JSON.parse(none.out)).toMatchObject({
      period: { from: '2020-01-01T00:00:00.000Z', to: '2020-02-01T00:00:00.000Z' },
      counts: { openings: 0 },
    });
    const v = await verifyAudit(empty);
    expect(v.code, v.err).toBe(0);
    expect(v.out).toMatch(/openings: 0\n {2}verified: 0\n/);
  });
});

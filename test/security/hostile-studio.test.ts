import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../support/stack.js';
import { expectError, expectJsonApi } from '../support/jsonapi-schema.js';
import { createApp, get, inventory, open, registerPlayer } from '../../services/chests/test/support/chests.js';

/**
 * Hostile studio work (docs/design.md §6, "The offline verifier checks the commitment" and "Costly studio
 * work is bounded"), through the whole stack: a server that rolled with another seed than the one
 * it committed to is caught by scripts/verify-opening.mjs; a tenant asking for many big
 * simulations at once gets one, run in chests off any event loop; a guesser of console keys is
 * throttled per address.
 */

const VERIFY = fileURLToPath(new URL('../../scripts/verify-opening.mjs', import.meta.url));

let stack: TestStack;
let dir: string;

beforeAll(async () => {
  // Two simulations at once in the chests process, so that two apps' runs overlap (the cap itself: services/chests/test/simulations.test.ts).
  stack = await startStack({ env: { SIMULATION_MAX_CONCURRENT: '2' } });
  dir = await mkdtemp(join(tmpdir(), 'ccs-hostile-studio-'));
}, 90_000);

afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the verifier with these arguments: its exit status, its output and its JSON (when it printed one). */
async function verifier(args: string[]): Promise<{ code: number; stdout: string; stderr: string; json?: any }> {
  const answer = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [VERIFY, ...args], (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    ),
  );
  let json: unknown;
  try {
    json = JSON.parse(answer.stdout);
  } catch {
    json = undefined;
  }
  return { ...answer, json };
}

/** Writes a JSON file of the test's folder and answers its path. */
async function file(name: string, value: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(value));
  return path;
}

describe('the offline verifier checks the commitment', () => {
  let odds: string;
  let oddsDoc: unknown;
  let opening: any;
  let seed: string;

  beforeAll(async () => {
    const p = await registerPlayer(stack);
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(1));
    const committed = (await get(stack, '/api/v1/players/me/fairness', p.token)).json().data.attributes.server_seed_hash;
    const opened = await open(stack, p, p.starterChestId);
    expect(opened.statusCode, opened.body).toBe(200);
    // The spec's opening result (its data is the opening, not a resource object).
    opening = opened.json();
    expect(opening.meta.fairness.server_seed_hash).toBe(committed);
    const rotated = await stack.inject({ method: 'POST', url: '/api/v1/players/me/fairness/rotate', headers: jsonApiHeaders(p.apiKey, p.token) });
    expect(rotated.statusCode, rotated.body).toBe(200);
    seed = rotated.json().meta.revealed.server_seed;
    const list = (await get(stack, '/api/v1/players/me/openings', p.token)).json();
    expectJsonApi(list);
    const item = list.data.find((o: { id: string }) => o.id === opening.meta.opening_id);
    const oddsRes = await get(stack, `/api/v1/chests/${item.attributes.chest_type_id}/odds?rules_version=${item.attributes.rules_version}`);
    expect(oddsRes.statusCode, oddsRes.body).toBe(200);
    oddsDoc = oddsRes.json();
    expectJsonApi(oddsDoc);
    odds = await file('odds.json', oddsDoc);
    await file('list-item.json', { data: item });
  });

  it('verifies a real opening from its document and the revealed seed: commitment_ok, matches, exit 0', async () => {
    const r = await verifier(['--odds', odds, '--server-seed', seed, '--expect', await file('opening.json', opening)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ commitment_ok: true, matches: true, server_seed_hash: opening.meta.fairness.server_seed_hash });
    expect(r.json.commitment).toBe(createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex'));
    // The item of /players/me/openings (wrapped as a document) verifies alike.
    const listed = await verifier(['--odds', odds, '--server-seed', seed, '--expect', join(dir, 'list-item.json')]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json).toMatchObject({ commitment_ok: true, matches: true });
  });

  it('refuses a seed that is not the one committed to, whatever the items: commitment_ok false, matches false, exit 1', async () => {
    // A server that committed to one seed and rolled with another: the document carries the other commitment.
    const other = createHash('sha256').update(randomBytes(32)).digest('hex');
    const forged = structuredClone(opening);
    forged.meta.fairness.server_seed_hash = other;
    const r = await verifier(['--odds', odds, '--server-seed', seed, '--expect', await file('forged.json', forged)]);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ commitment_ok: false, matches: false, server_seed_hash: other });
    expect(r.stderr).toMatch(/not the published commitment/);
    // The same through --server-seed-hash, with the genuine document: the seed must hash to both.
    const flag = await verifier(['--odds', odds, '--server-seed', seed, '--server-seed-hash', other, '--expect', join(dir, 'opening.json')]);
    expect(flag.code).toBe(1);
    expect(flag.json).toMatchObject({ commitment_ok: false, matches: false });
    // Without a document to compare: still refused.
    const bare = await verifier([
      '--odds',
      odds,
      '--server-seed',
      seed,
      '--server-seed-hash',
      other,
      '--client-seed',
      opening.meta.fairness.client_seed,
      '--nonce',
      String(opening.meta.fairness.nonce),
    ]);
    expect(bare.code).toBe(1);
    expect(bare.json).toMatchObject({ commitment_ok: false, matches: false });
    // In a batch, that case fails and the run exits 1.
    const cases = [
      { odds: oddsDoc, server_seed: seed, expect: opening },
      { odds: oddsDoc, server_seed: seed, expect: forged },
    ];
    const batch = await verifier(['--batch', await file('cases.json', cases)]);
    expect(batch.code).toBe(1);
    const lines = batch.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.slice(0, 2).map((l) => [l.commitment_ok, l.matches])).toEqual([
      [true, true],
      [false, false],
    ]);
    expect(lines[2]).toEqual({ cases: 2, failed: 1 });
  });

  it('says so when items differ from what the committed seed rolls: matches false, exit 1', async () => {
    const altered = structuredClone(opening);
    altered.data.collectibles = altered.data.collectibles.slice(1);
    const r = await verifier(['--odds', odds, '--server-seed', seed, '--expect', await file('altered.json', altered)]);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ commitment_ok: true, matches: false });
  });

  it('exits 2 when given no commitment at all, and says so', async () => {
    const bare = structuredClone(opening);
    delete bare.meta.fairness;
    const r = await verifier([
      '--odds',
      odds,
      '--server-seed',
      seed,
      '--client-seed',
      opening.meta.fairness.client_seed,
      '--nonce',
      String(opening.meta.fairness.nonce),
      '--expect',
      await file('bare.json', bare),
    ]);
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ commitment_ok: null });
    expect(r.stderr).toMatch(/no commitment/);
    // Given the commitment by flag instead, the same document verifies.
    const flagged = await verifier([
      '--odds',
      odds,
      '--server-seed',
      seed,
      '--server-seed-hash',
      opening.meta.fairness.server_seed_hash,
      '--client-seed',
      opening.meta.fairness.client_seed,
      '--nonce',
      String(opening.meta.fairness.nonce),
      '--expect',
      join(dir, 'bare.json'),
    ]);
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(flagged.json).toMatchObject({ commitment_ok: true, matches: true });
    // A batch case without one makes the run exit 2 (when nothing failed).
    const batch = await verifier([
      '--batch',
      await file('uncommitted.json', [
        {
          odds: oddsDoc,
          server_seed: seed,
          client_seed: opening.meta.fairness.client_seed,
          nonce: opening.meta.fairness.nonce,
          expect: bare,
        },
      ]),
    ]);
    expect(batch.code).toBe(2);
    expect(batch.stdout.trim().split('\n').at(-1)).toBe(JSON.stringify({ cases: 1, failed: 0, uncommitted: 1 }));
  });

  it('prints its usage with --help (exit 0) and refuses unusable input with exit 2', async () => {
    const help = await verifier(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage:/);
    expect(help.stdout).toContain('--server-seed-hash');
    for (const args of [
      ['--odds', odds],
      ['--odds', odds, '--server-seed', 'not-hex', '--expect', join(dir, 'opening.json')],
      ['--odds', odds, '--server-seed', seed, '--server-seed-hash', 'abc', '--expect', join(dir, 'opening.json')],
      ['--odds', odds, '--server-seed', seed, '--expect', join(dir, 'missing.json')],
      ['--no-such-flag', 'x'],
    ]) {
      const r = await verifier(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^verify-opening: /);
    }
  });
});

/**
 * The demo content with the costliest Silver Chest a tenant may write: 50 items and 10 bonus
 * items per opening, soft pity from the first opening (a 100,000-opening run rolls 6 million items).
 */
function heavyContent(): AppContent {
  const base = readContentFile();
  const top = [...base.rarities].sort((a, b) => b.rank - a.rank)[0]!.id;
  return {
    ...base,
    chests: base.chests.map((c) =>
      c.id === 'silver-chest'
        ? {
            ...c,
            rules: {
              ...c.rules,
              items: { fixed: 50 },
              bonus: [{ chance: 1, count: 10, min_rarity: base.rarities[0]!.id }],
              pity: { rarity: top, hard: 10_000, soft_start: 1, soft_step: 0.000001 },
            },
          }
        : c,
    ),
  };
}

describe('costly studio work is bounded: simulations', () => {
  let first: { appId: string; publishableKey: string; secretKey: string };
  let second: { appId: string; publishableKey: string; secretKey: string };
  beforeAll(async () => {
    [first, second] = await Promise.all([createApp(stack, heavyContent()), createApp(stack)]);
    // Each new app's content reaches the chests service within moments.
    for (const app of [first, second]) await eventually(async () => expect((await simulate(app.secretKey, 1)).statusCode).toBe(200));
  });

  /** The apps whose simulation lock (a Postgres advisory lock chests holds for a run) is held now. */
  const locked = async (): Promise<string[]> => {
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query<{ app: string }>(
        `SELECT a.app FROM unnest($1::text[]) AS a(app)
           JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
            AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('ccs.simulation:' || a.app, 0)`,
        [[first.appId, second.appId]],
      );
      return rows.map((r) => r.app);
    } finally {
      await db.end();
    }
  };

  const simulate = (secretKey: string, opens: number, chest = 'silver-chest') =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/admin/chests/${chest}/simulation`,
      headers: jsonApiHeaders(secretKey),
      payload: { data: { type: 'simulation', attributes: { opens } } },
    });

  it(
    "keeps the gateway answering while a 100,000-opening simulation runs: health, another app's reads and simulation come first",
    { timeout: 180_000 },
    async () => {
      const order: string[] = [];
      const big = simulate(first.secretKey, 100_000).then((res) => {
        order.push('big simulation');
        return res;
      });
      // Sequential calls made while it runs: each is answered before the big one is.
      for (let i = 0; i < 5; i++) {
        const health = await stack.inject({ method: 'GET', url: '/healthz' });
        expect(health.statusCode).toBe(200);
        order.push('healthz');
      }
      const catalog = await stack.inject({ method: 'GET', url: '/api/v1/chests', headers: jsonApiHeaders(second.publishableKey) });
      expect(catalog.statusCode, catalog.body).toBe(200);
      order.push('catalog');
      const small = await simulate(second.secretKey, 200);
      expect(small.statusCode, small.body).toBe(200);
      expectJsonApi(small.json());
      order.push('small simulation');
      const res = await big;
      expect(res.statusCode, res.body).toBe(200);
      expectJsonApi(res.json());
      expect(res.json().data.attributes.opens).toBe(100_000);
      expect(order).toEqual(['healthz', 'healthz', 'healthz', 'healthz', 'healthz', 'catalog', 'small simulation', 'big simulation']);
    },
  );

  it(
    'runs one simulation per app at a time: the second gets 429 simulation_busy with Retry-After; another app is not held up',
    { timeout: 180_000 },
    async () => {
      const [a, b] = await Promise.all([simulate(first.secretKey, 100_000), simulate(first.secretKey, 100_000)]);
      const busy = [a, b].find((r) => r.statusCode === 429)!;
      const done = [a, b].find((r) => r.statusCode === 200)!;
      expect([a.statusCode, b.statusCode].sort()).toEqual([200, 429]);
      expectJsonApi(done.json());
      expectError(busy, 429, 'simulation_busy');
      expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(busy.headers['retry-after'])).toBeLessThanOrEqual(15);
      expect(busy.json().errors[0].meta.retry_after_seconds).toBe(Number(busy.headers['retry-after']));
      // Two different apps at once: both run.
      const [x, y] = await Promise.all([simulate(first.secretKey, 20_000), simulate(second.secretKey, 20_000)]);
      expect([x.statusCode, y.statusCode], `${x.body} ${y.body}`).toEqual([200, 200]);
      // Once finished, the app simulates again.
      expect((await simulate(first.secretKey, 100)).statusCode).toBe(200);
    },
  );

  it('lets eight concurrent 100,000-opening simulations of one app run exactly one; nothing is left locked', { timeout: 180_000 }, async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => simulate(first.secretKey, 100_000)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 429, 429, 429, 429, 429, 429, 429]);
    for (const r of answers.filter((x) => x.statusCode === 429)) expectError(r, 429, 'simulation_busy');
    expect(await locked()).toEqual([]);
  });

  it('refuses the publishable key (403), a bad body (422) and an unknown chest (404) before taking any lock', async () => {
    expectError(await simulate(first.publishableKey, 100), 403);
    expectError(await simulate(first.secretKey, 100_001), 422);
    expectError(await simulate(first.secretKey, 100, 'no-such-chest'), 404, 'chest_not_found');
    expect(await locked()).toEqual([]);
  });
});

describe('costly studio work is bounded: console sign-in', () => {
  let app: { appId: string; publishableKey: string; secretKey: string };
  beforeAll(async () => {
    app = await createApp(stack);
  });

  const signIn = (secretKey: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    stack.inject({
      method: 'POST',
      url: '/console/sign-in',
      remoteAddress,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams({ secret_key: secretKey }).toString(),
    });

  it('answers 429 with Retry-After after 10 failed sign-ins a minute from one address, a right key too; another address is not affected', async () => {
    const guesser = '198.51.100.7';
    for (let i = 0; i < 10; i++) {
      const res = await signIn(`sk_guess_${i}_${randomBytes(8).toString('hex')}`, guesser);
      expect(res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
    const eleventh = await signIn(`sk_guess_${randomBytes(8).toString('hex')}`, guesser);
    expect(eleventh.statusCode).toBe(429);
    expect(String(eleventh.headers['content-type'])).toContain('text/html');
    expect(Number(eleventh.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(eleventh.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(eleventh.body).toContain('Too many failed sign-ins');
    expect(eleventh.headers['set-cookie']).toBeUndefined();
    // The right key from that address waits as well (no session is made)…
    const right = await signIn(app.secretKey, guesser);
    expect(right.statusCode).toBe(429);
    expect(right.headers['set-cookie']).toBeUndefined();
    // …and a forged X-Forwarded-For from an address that is not a trusted proxy changes nothing.
    expect((await signIn(app.secretKey, guesser, { 'x-forwarded-for': '203.0.113.99' })).statusCode).toBe(429);
    // Another address signs in at once.
    const other = await signIn(app.secretKey, '198.51.100.8');
    expect(other.statusCode).toBe(303);
    expect(other.headers.location).toBe('/console');
  });

  it('does not count successes, and counts an IPv6 /64 as one address', async () => {
    // Successes neither count nor reset: 10 sign-ins with the right key leave 10 failures possible, no more.
    const studio = '198.51.100.20';
    for (let i = 0; i < 10; i++) expect((await signIn(app.secretKey, studio)).statusCode).toBe(303);
    for (let i = 0; i < 10; i++) expect((await signIn('sk_wrong', studio)).statusCode).toBe(401);
    expect((await signIn(app.secretKey, studio)).statusCode).toBe(429);
    // Walking through the addresses of one /64 does not escape the count.
    for (let i = 1; i <= 10; i++) expect((await signIn('sk_wrong', `2001:db8:1:2::${i.toString(16)}`)).statusCode).toBe(401);
    expect((await signIn('sk_wrong', '2001:db8:1:2:ffff:ffff:ffff:ffff')).statusCode).toBe(429);
    expect((await signIn(app.secretKey, '2001:db8:1:3::1')).statusCode).toBe(303);
  });
});

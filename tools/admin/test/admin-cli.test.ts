import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONTENT_PATH, readContentFile, ResolveApiKey } from '@ccs/shared';
import pg from 'pg';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { holdLock } from '../../../test/resilience/support/held-lock.js';
import { runAdmin } from '../src/cli.js';

const ADMIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const exec = promisify(execFile);

/** What one admin command printed and returned. */
interface Run {
  code: number;
  out: string;
  err: string;
}

/** A content file with `collectibles` generated collectibles besides the default content. */
function bigContent(collectibles: number) {
  const content = JSON.parse(readFileSync(DEFAULT_CONTENT_PATH, 'utf8'));
  const perCollection = 50;
  for (let i = 0; i < collectibles / perCollection; i++) {
    content.collections.push({
      id: `generated-${i}`,
      name: `Generated ${i}`,
      description: 'A collection generated for a big content load.',
      collectibles: Array.from({ length: perCollection }, (_, j) => ({
        id: `generated-${i}-${j}`,
        name: `Generated item ${i}/${j}`,
        description: 'A generated collectible with a description of a realistic length for a game.',
        images: [`https://cdn.example.com/items/${i}/${j}.png`],
        rarity: 'common',
      })),
    });
  }
  return content;
}

describe('admin command line (npm run admin)', () => {
  let stack: TestStack;
  let dir: string;

  beforeAll(async () => {
    stack = await startStack();
    dir = mkdtempSync(path.join(tmpdir(), 'ccs-admin-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await stack?.close();
  });

  /** Runs one command in this process against the stack, capturing stdout and stderr. */
  async function admin(argv: string[], maxPayload = stack.nc.info!.max_payload): Promise<Run> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(argv, { bus: stack.bus, io: { out: (l) => out.push(l), progress: (l) => err.push(l) }, maxPayload });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }
  /** Creates an app through the CLI (JSON output); returns its id and keys. */
  async function newApp(name: string): Promise<{ appId: string; publishableKey: string; secretKey: string }> {
    const r = await admin(['create-app', '--name', name, '--json']);
    expect(r.code, r.err).toBe(0);
    return JSON.parse(r.out);
  }
  const resolves = (apiKey: string) =>
    stack.bus.request(ResolveApiKey, { apiKey }, { requestId: 'admin-test' }).then(
      () => true,
      () => false,
    );

  it('create-app follows each service applying the content, and list-apps shows it as a table or JSON', async () => {
    const created = await admin(['create-app', '--name', 'Listed game']);
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^App "Listed game" created \(content version 1\)\.\n {2}content: +.+\n {2}app id: +[0-9a-f-]{36}\n/);
    // Without --content it says which content the app got: the default (demo) content, at the path the players service read.
    expect(/content: +(.+)/.exec(created.out)![1]).toBe(
      `the default (demo) content, ${DEFAULT_CONTENT_PATH}, with player credit off (--content <file> loads your own)`,
    );
    for (const s of ['wallet', 'chests', 'collections'])
      expect(created.err).toMatch(new RegExp(`^ {2}${s} +applied version 1 \\(\\d+\\.\\d s\\)$`, 'm'));
    const appId = /app id: +(\S+)/.exec(created.out)![1]!;

    const table = await admin(['list-apps']);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.out.split('\n');
    expect(header).toMatch(/^APP ID +NAME +DEMO +CONTENT +PLAYERS +KEYS PK\/SK +CREATED \(UTC\)$/);
    // The demo app has a publishable and a secret key (the console's sign-in).
    expect(rows[0]).toMatch(/^[0-9a-f-]{36} {2}Demo app +yes +1 +\d+ +1\/1 {2}\d{4}-\d\d-\d\d \d\d:\d\d$/);
    expect(rows.find((r) => r.startsWith(appId))).toMatch(/Listed game +1 +0 +1\/1 {2}/);

    const json = JSON.parse((await admin(['list-apps', '--json'])).out);
    expect(json.apps[0]).toMatchObject({ name: 'Demo app', isDemo: true, contentVersion: 1 });
    expect(json.apps.find((a: { appId: string }) => a.appId === appId)).toMatchObject({
      name: 'Listed game',
      isDemo: false,
      contentVersion: 1,
      players: 0,
      liveKeys: { publishable: 1, secret: 1 },
    });
  });

  it('rotate-keys issues new keys; old ones keep working for the grace period, or stop at once with --now', async () => {
    const app = await newApp('Rotating game');
    const first = await admin(['rotate-keys', '--app', app.appId, '--kind', 'publishable']);
    expect(first.code, first.err).toBe(0);
    const second = /publishable +(pk_\S+)/.exec(first.out)![1]!;
    expect(first.out).toMatch(/1 old key\(s\) keep working until \S+ \(24 h grace\)/);
    expect(await resolves(app.publishableKey)).toBe(true);
    expect(await resolves(second)).toBe(true);
    expect(await resolves(app.secretKey)).toBe(true);
    const res = await stack.inject({ method: 'GET', url: '/api/v1/chests', headers: jsonApiHeaders(second) });
    expect(res.statusCode, res.body).toBe(200);
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query(
        'SELECT extract(epoch FROM revoked_at - now())::int AS left FROM players.api_keys WHERE app_id = $1 AND revoked_at IS NOT NULL',
        [app.appId],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].left).toBeGreaterThan(86_400 - 60);
      expect(rows[0].left).toBeLessThanOrEqual(86_400);
    } finally {
      await db.end();
    }

    const now = JSON.parse((await admin(['rotate-keys', '--app', app.appId, '--now', '--json'])).out);
    expect(now.keys.map((k: { kind: string }) => k.kind)).toEqual(['publishable', 'secret']);
    expect(now.retired).toHaveLength(3);
    for (const old of [app.publishableKey, second, app.secretKey]) expect(await resolves(old)).toBe(false);
    for (const k of now.keys) expect(await resolves(k.key)).toBe(true);
    // The gateway cached `second` as valid a moment ago (its TTL is 30 s); the rotation's notice
    // makes it forget that app's keys at once.
    await eventually(async () => {
      const gone = await stack.inject({ method: 'GET', url: '/api/v1/chests', headers: jsonApiHeaders(second) });
      expect(gone.statusCode, gone.body).toBe(401);
    }, 2000);

    const grace = await admin(['rotate-keys', '--app', app.appId, '--kind', 'secret', '--grace', '2h']);
    expect(grace.out).toMatch(/1 old key\(s\) keep working until \S+ \(2 h grace\)/);
    expect((await admin(['rotate-keys', '--app', app.appId, '--grace', '40d'])).err).toMatch(/^--grace is at most 30d/);
  });

  it('stats gathers the app figures from every service, and says which service is not running', async () => {
    const app = await newApp('Counted game');
    const register = (email: string) =>
      stack.inject({
        method: 'POST',
        url: '/api/v1/players/register',
        headers: jsonApiHeaders(app.publishableKey),
        payload: {
          data: { type: 'player', attributes: { email, password: 'Str0ng!pass', password_confirmation: 'Str0ng!pass' }, relationships: {} },
        },
      });
    const ada = (await register('ada@example.com')).json();
    await register('bob@example.com');
    await stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: { apikey: app.publishableKey } });
    const open = await eventually(async () => {
      const r = await stack.inject({
        method: 'POST',
        url: `/api/v1/chests/${ada.meta.welcome_bonus.starter_chest}/open`,
        headers: jsonApiHeaders(app.publishableKey, ada.meta.access_token),
      });
      expect(r.statusCode, r.body).toBe(200);
      return r.json();
    });
    const items: number = open.data.statistics.total_items;

    const stats = await eventually(async () => {
      const s = JSON.parse((await admin(['stats', '--app', app.appId, '--json'])).out);
      expect(s.collections.openingsGranted).toBe(1);
      expect(s.wallet.balances[0].holders).toBe(3);
      return s;
    });
    expect(stats.players).toMatchObject({
      service: 'players',
      contentVersion: 1,
      players: { total: 3, registered: 2, guests: 1 },
      app: { name: 'Counted game', isDemo: false },
    });
    expect(stats.chests).toMatchObject({
      contentVersion: 1,
      chests: { unopened: 2, opened: 1 },
      openingsLast24h: 1,
      purchases: { completed: 0, unsettled: 0 },
    });
    expect(stats.collections).toMatchObject({ contentVersion: 1, itemsGranted: items, openingsGranted: 1, collectors: 1 });
    // Registered players get the initial currency and the welcome bonus (1500 coins, 15 gems), guests the initial currency.
    expect(stats.wallet.balances).toEqual([
      { code: 'coins', name: 'Coins', total: '4000.00', holders: 3 },
      { code: 'gems', name: 'Gems', total: '40.00', holders: 3 },
      { code: 'vault_key', name: 'Vault Key', total: '0.00', holders: 0 },
    ]);
    for (const s of ['players', 'wallet', 'chests', 'collections']) expect(stats[s].messaging.parked).toEqual({ app: 0, total: 0 });

    const text = await admin(['stats', '--app', app.appId]);
    expect(text.code).toBe(0);
    expect(text.out).toContain(`App "Counted game" (${app.appId}), created `);
    expect(text.out).toMatch(/^players {9}3 \(2 registered, 1 guests\)$/m);
    expect(text.out).toMatch(/^chests {10}2 unopened, 1 opened \(1 in the last 24 h\)$/m);
    expect(text.out).toMatch(/^pending grants {2}0 opening\(s\) not yet in collections/m);
    expect(text.out).toMatch(/^coins +Coins +4000\.00 +3$/m);
    expect(text.out).toMatch(/^collections +1 +0\/\d+ +\S+ +0\/0$/m);

    await stack.stopService('collections');
    try {
      const partial = await admin(['stats', '--app', app.appId]);
      expect(partial.code).toBe(0);
      expect(partial.out).toMatch(/^items granted {3}unknown \(collections not running\)$/m);
      expect(partial.out).toMatch(/^collections +not running$/m);
    } finally {
      await stack.startService('collections');
    }
  });

  it('load-content validates a big file, loads it, and shows each service acknowledging the version', async () => {
    const app = await newApp('Loaded game');
    const file = path.join(dir, 'big.json');
    writeFileSync(file, JSON.stringify(bigContent(2000)));
    const r = await admin(['load-content', '--app', app.appId, '--file', file]);
    expect(r.code, r.err).toBe(0);
    const progress = r.err.split('\n');
    expect(progress[0]).toMatch(/^Reading .*big\.json \(\d+\.\d KB\)…$/);
    const demoFile = readContentFile();
    expect(progress[1]).toMatch(
      new RegExp(
        `^Valid: ${demoFile.currencies.length} currencies, \\d+ rarities, \\d+ collections \\(\\d+ collectibles\\), ${demoFile.chests.length} chest types\\.$`,
      ),
    );
    expect(progress[2]).toBe(`Loading into app ${app.appId}…`);
    expect(progress[3]).toMatch(/^ {2}players +stored version 2$/);
    expect(progress.slice(4).sort()).toEqual(
      ['chests', 'collections', 'wallet'].map((s) => expect.stringMatching(new RegExp(`^ {2}${s} +applied version 2 \\(\\d+\\.\\d s\\)$`))),
    );
    expect(r.out).toBe(`Content of ${file} loaded into app ${app.appId} as version 2; applied by wallet, chests, collections.`);

    // Too big for one NATS message: said before anything is sent.
    const small = await admin(['load-content', '--app', app.appId, '--file', file], 64 * 1024);
    expect(small.code).toBe(1);
    expect(small.err).toMatch(/above the 64\.0 KB NATS accepts \(max_payload\): raise max_payload/);
  });

  it('load-content exits 1 naming the service that has not applied the version in time', async () => {
    const app = await newApp('Slow game');
    const file = path.join(dir, 'default.json');
    writeFileSync(file, readFileSync(DEFAULT_CONTENT_PATH));
    // collections cannot write the app's new version while the test holds its row.
    const lock = await holdLock(stack.env.DATABASE_URL!, 'SELECT 1 FROM collections.apps WHERE app_id = $1 FOR UPDATE', [app.appId]);
    let r: Run;
    try {
      r = await admin(['load-content', '--app', app.appId, '--file', file, '--wait', '2', '--json']);
    } finally {
      await lock.release();
    }
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^ {2}collections +still on version 1 after 2 s: check its log and its parked messages \(npm run admin -- stats --app /m);
    const json = JSON.parse(r.out);
    expect(json.services).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ service: 'collections', status: 'behind', contentVersion: 1 }),
        expect.objectContaining({ service: 'wallet', status: 'applied', contentVersion: 2 }),
      ]),
    );
    const after = await admin(['load-content', '--app', app.appId, '--file', file, '--no-wait']);
    expect(after.out).toMatch(/as version 3; every service applies it shortly\.$/);
  });

  it('answers bad usage with exit 2 and the usage, and an unknown app with exit 1 and a hint', async () => {
    const bad = await admin(['rotate-keys', '--app', 'not-an-id']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^--app takes an app id \(a UUID, as list-apps shows\), not "not-an-id"\n\nUsage: npm run admin/);
    expect((await admin(['stats', '--app', '6f2c3a52-8d7e-4f1a-9b0c-2d4e6f8a0b1c', '--bogus'])).err).toMatch(/^Unknown option '--bogus'\n/);
    expect((await admin(['frobnicate'])).err).toMatch(/^unknown command "frobnicate"/);
    const unknown = await admin(['stats', '--app', '6f2c3a52-8d7e-4f1a-9b0c-2d4e6f8a0b1c']);
    expect(unknown).toEqual({ code: 1, out: '', err: 'No app 6f2c3a52-8d7e-4f1a-9b0c-2d4e6f8a0b1c. List the apps with: npm run admin -- list-apps' });
    expect((await admin(['--help'])).out).toMatch(/^Usage: npm run admin -- <command> \[options\]/);
  });

  it('runs as a process: JSON on stdout, and one line saying to start the stack when NATS is not there', async () => {
    const run = async (env: Record<string, string>, args: string[]) =>
      exec(process.execPath, ['--import', 'tsx', '--conditions=development', ADMIN, ...args], {
        env: { ...process.env, ...env },
        timeout: 30_000,
      }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
      );
    const listed = await run({ NATS_URL: stack.env.NATS_URL!, NATS_PREFIX: stack.env.NATS_PREFIX! }, ['list-apps', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).apps[0].name).toBe('Demo app');
    const down = await run({ NATS_URL: 'nats://127.0.0.1:1' }, ['list-apps']);
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toMatch(
      /^Cannot reach NATS at nats:\/\/127\.0\.0\.1:1 \(\w+\): start the stack with `npm start`, or set NATS_URL to where it runs\.$/,
    );
  });
});

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminLoadContent, Bus, DEFAULT_CONTENT_PATH, GetJwks, readContentFile, ResolveApiKey, startService, type AppContent } from '@ccs/shared';
import { createTestDatabase, deleteTestStreams, isolatedConfig, testInfra } from '@ccs/shared/testing';
import { jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError } from '../../../test/support/jsonapi-schema.js';
import { PlayersConfigSchema } from '../src/config.js';
import { playersService } from '../src/service.js';
import { createOtherApp, dbClient, loginBody, newEmail, register } from './support/players.js';

const ADMIN = fileURLToPath(new URL('../../../tools/admin/src/main.ts', import.meta.url));
const run = promisify(execFile);
const ctx = () => ({ requestId: randomUUID() });

/** Runs the admin command line against a stack's NATS prefix; resolves with its exit code and output. */
async function admin(stack: TestStack, args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--conditions=development', ADMIN, ...args], {
      env: { ...process.env, NATS_URL: stack.env.NATS_URL, NATS_PREFIX: stack.env.NATS_PREFIX, LOG_LEVEL: 'silent' },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('apps, API keys and signing keys', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['players'], env: { GRANT_WAIT_MS: '0' } });
  });
  afterAll(async () => stack?.close());

  const countDemoApps = async () => {
    const db = await dbClient(stack);
    try {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM players.apps WHERE is_demo');
      const n: number = rows[0].n;
      return n;
    } finally {
      await db.end();
    }
  };

  it('creates the demo app once, with CHESTS_DEMO_API_KEY as its key, and announces its content', async () => {
    expect(await stack.bus.request(ResolveApiKey, { apiKey: stack.apiKey }, ctx())).toMatchObject({ keyKind: 'publishable' });
    await stack.stopService('players');
    await stack.startService('players');
    expect(await countDemoApps()).toBe(1);
    const db = await dbClient(stack);
    try {
      const { rows } = await db.query(`SELECT payload FROM players.outbox WHERE subject = 'grants.apps.content'`);
      const demo = await stack.bus.request(ResolveApiKey, { apiKey: stack.apiKey }, ctx());
      expect(rows.map((r) => r.payload.appId)).toEqual([demo.appId]);
      expect(rows[0].payload.content.currencies.map((c: { code: string }) => c.code)).toEqual(readContentFile().currencies.map((c) => c.code));
      expect(rows[0].payload.version).toBe(1);
    } finally {
      await db.end();
    }
  });

  it('keeps the signing key across restarts, so tokens issued before stay valid', async () => {
    const player = await register(stack);
    const before = await stack.bus.request(GetJwks, {}, ctx());
    await stack.stopService('players');
    await stack.startService('players');
    const after = await stack.bus.request(GetJwks, {}, ctx());
    expect(after).toEqual(before);
    expect(after.issuer).toBe('collectible-chest-service');
    const kid = JSON.parse(Buffer.from(player.accessToken.split('.')[0]!, 'base64url').toString()).kid;
    expect(after.keys.map((k) => k.kid)).toContain(kid);
    const res = await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(stack.apiKey, player.accessToken) });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('creates further apps through the admin endpoint, each with a publishable and a secret key', async () => {
    const other = await createOtherApp(stack, 'Second game');
    expect(other.contentVersion).toBe(1);
    expect(await stack.bus.request(ResolveApiKey, { apiKey: other.publishableKey }, ctx())).toEqual({ appId: other.appId, keyKind: 'publishable' });
    expect(await stack.bus.request(ResolveApiKey, { apiKey: other.secretKey }, ctx())).toEqual({ appId: other.appId, keyKind: 'secret' });
    await expect(stack.bus.request(ResolveApiKey, { apiKey: 'pk_unknown' }, ctx())).rejects.toMatchObject({ status: 404 });
    const db = await dbClient(stack);
    try {
      const { rows } = await db.query('SELECT key_hash FROM players.api_keys');
      expect(rows.map((r) => r.key_hash).join()).not.toContain(other.publishableKey);
    } finally {
      await db.end();
    }
  });

  it('keeps apps apart: same email in two apps, no login or token across them', async () => {
    const other = await createOtherApp(stack, 'Isolated game');
    const email = newEmail('twice');
    const mine = await register(stack, { email });
    const theirs = await register(stack, { email, apiKey: other.publishableKey });
    expect(theirs.id).not.toBe(mine.id);
    const stranger = await register(stack, { apiKey: other.publishableKey });
    const login = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/login',
      headers: jsonApiHeaders(stack.apiKey),
      payload: loginBody(stranger.email!),
    });
    expectError(login, 401, 'invalid_credentials');
    const me = await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(stack.apiKey, stranger.accessToken) });
    expectError(me, 401, 'invalid_token');
  });

  it('loads a new content version whose player rules apply to the next registrations', async () => {
    const other = await createOtherApp(stack, 'Content game');
    const content: AppContent = JSON.parse(readFileSync(DEFAULT_CONTENT_PATH, 'utf8'));
    content.players.initial_currency = { coins: 42 };
    content.players.access_token_ttl_seconds = 300;
    const { version } = await stack.bus.request(AdminLoadContent, { appId: other.appId, content }, ctx());
    expect(version).toBe(2);
    const player = await register(stack, { apiKey: other.publishableKey });
    expect(player.body.meta.initial_currency).toEqual({ coins: 42 });
    expect(player.body.meta.expires_in).toBe(300);
    await expect(stack.bus.request(AdminLoadContent, { appId: randomUUID(), content }, ctx())).rejects.toMatchObject({ status: 404 });
  });

  // Five command-line runs, each a new Node process: a loaded CI machine needs more than 30 s.
  it('offers the same through the admin command line', async () => {
    const created = await admin(stack, ['create-app', '--name', 'CLI game']);
    expect(created.code, created.stderr).toBe(0);
    const key = /publishable key: (\S+)/.exec(created.stdout)?.[1];
    const appId = /app id: +(\S+)/.exec(created.stdout)?.[1];
    expect(created.stdout).toMatch(/secret key: +sk_/);
    expect(await stack.bus.request(ResolveApiKey, { apiKey: key! }, ctx())).toEqual({ appId, keyKind: 'publishable' });

    const dir = mkdtempSync(path.join(tmpdir(), 'ccs-content-'));
    try {
      const content = JSON.parse(readFileSync(DEFAULT_CONTENT_PATH, 'utf8'));
      writeFileSync(path.join(dir, 'content.json'), JSON.stringify(content));
      const loaded = await admin(stack, ['load-content', '--app', appId!, '--file', path.join(dir, 'content.json')]);
      expect(loaded.code, loaded.stderr).toBe(0);
      expect(loaded.stdout).toContain('as version 2');
      writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ ...content, currencies: [] }));
      const bad = await admin(stack, ['load-content', '--app', appId!, '--file', path.join(dir, 'bad.json')]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('currencies');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const usage = await admin(stack, ['create-app']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('missing --name');
  }, 90_000);

  it('tells the operator to start the stack when no players service answers', async () => {
    const prefix = `nobody${randomUUID().slice(0, 8)}`;
    const res = await admin({ ...stack, env: { ...stack.env, NATS_PREFIX: prefix } }, ['create-app', '--name', 'X']);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      `No players service answered on NATS prefix "${prefix}": start the stack with \`npm start\`, or set NATS_PREFIX to the prefix the running stack uses.`,
    );
  });
});

describe('demo app without CHESTS_DEMO_API_KEY', () => {
  it('generates a random key, logs it once, keeps the one demo app across restarts, and adds a key set later', async () => {
    const infra = await testInfra();
    const db = await createTestDatabase(infra);
    const config = PlayersConfigSchema.parse({ ...isolatedConfig(infra, db.url), LOG_LEVEL: 'info' });
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    try {
      const first = await startService(playersService, config, logger);
      await first.stop();
      const second = await startService(playersService, config, logger);
      try {
        const announcements = lines.filter((l) => l.includes('demo app created; API key: '));
        expect(announcements).toHaveLength(1);
        const key = /API key: (pk_[\w-]+)/.exec(announcements[0]!)?.[1];
        const bus = new Bus(second.deps.nc, config.NATS_PREFIX, 2000);
        const demo = await bus.request(ResolveApiKey, { apiKey: key! }, ctx());
        expect(demo).toMatchObject({ keyKind: 'publishable' });
        // Its secret key (the studio console's sign-in) is logged once too.
        const secrets = lines.filter((l) => l.includes('demo app secret key'));
        expect(secrets).toHaveLength(1);
        const secret = /: (sk_[\w-]+)/.exec(secrets[0]!)?.[1];
        expect(await bus.request(ResolveApiKey, { apiKey: secret! }, ctx())).toEqual({ ...demo, keyKind: 'secret' });
        const { rows } = await second.deps.pool.query('SELECT count(*)::int AS n FROM apps');
        expect(rows[0].n).toBe(1);
      } finally {
        await second.stop();
      }
      // Setting CHESTS_DEMO_API_KEY later adds it to the same demo app; the generated key keeps working.
      const chosen = `demo_${randomUUID().replace(/-/g, '')}`;
      const chosenSecret = `demo_secret_${randomUUID().replace(/-/g, '')}`;
      const third = await startService(playersService, { ...config, CHESTS_DEMO_API_KEY: chosen, CHESTS_DEMO_SECRET_KEY: chosenSecret }, logger);
      try {
        const bus = new Bus(third.deps.nc, config.NATS_PREFIX, 2000);
        const byChosen = await bus.request(ResolveApiKey, { apiKey: chosen }, ctx());
        expect(await bus.request(ResolveApiKey, { apiKey: chosenSecret }, ctx())).toEqual({ ...byChosen, keyKind: 'secret' });
        const generated = /API key: (pk_[\w-]+)/.exec(lines.find((l) => l.includes('API key: '))!)![1]!;
        expect(await bus.request(ResolveApiKey, { apiKey: generated }, ctx())).toEqual(byChosen);
        const { rows } = await third.deps.pool.query('SELECT count(*)::int AS n FROM apps');
        expect(rows[0].n).toBe(1);
      } finally {
        await third.stop();
      }
    } finally {
      await deleteTestStreams(config.NATS_URL, config.NATS_PREFIX);
      await db.drop();
    }
  });
});

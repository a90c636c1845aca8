import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'nats';
import { Bus, DEFAULT_CONTENT_PATH, GetJwks, ResolveApiKey } from '@ccs/shared';
import { runAdmin } from '../../../tools/admin/src/cli.js';
import { jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { createOtherApp, loginBody, newEmail, register } from './support.js';

const ctx = () => ({ requestId: randomUUID() });

/**
 * Runs an admin command against a stack's NATS prefix, in this process (the command line's own
 * code, as tools/admin/test/admin-cli.test.ts runs it; that file also runs it as a process).
 */
async function admin(stack: TestStack, args: string[], prefix = stack.env.NATS_PREFIX!) {
  const nc = await connect({ servers: stack.env.NATS_URL });
  const stdout: string[] = [];
  const stderr: string[] = [];
  try {
    const code = await runAdmin(args, {
      bus: new Bus(nc, prefix, 15_000),
      io: { out: (l) => stdout.push(l), progress: (l) => stderr.push(l) },
      maxPayload: nc.info!.max_payload,
    });
    return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  } finally {
    await nc.close();
  }
}

describe('apps, API keys and signing keys', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['players'], env: { GRANT_WAIT_MS: '0' } });
  });
  afterAll(async () => stack?.close());

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
    const res = await admin(stack, ['create-app', '--name', 'X'], prefix);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      `No players service answered on NATS prefix "${prefix}": start the stack with \`npm start\`, or set NATS_PREFIX to the prefix the running stack uses.`,
    );
  });
});

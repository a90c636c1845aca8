import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { keyId } from '../../../services/players/src/tokens/signing-keys.js';
import { createOtherApp, dbClient, loginBody, newEmail, refreshBody, register, STRONG_PASSWORD, type TestPlayer } from './support.js';

function p256() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicPem, kid: keyId(publicPem) };
}

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const decodePart = (token: string, i: number) => JSON.parse(Buffer.from(token.split('.')[i]!, 'base64url').toString());

describe('login, refresh, logout and token checks', () => {
  const serverKey = p256();
  let stack: TestStack;
  let alice: TestPlayer;
  let bob: TestPlayer;

  beforeAll(async () => {
    // The stack signs with a key this test knows, so it can forge tokens the signature accepts.
    // No chests here: registrations answer without waiting for their grants.
    stack = await startStack({ env: { JWT_PRIVATE_KEY: serverKey.privatePem, GRANT_WAIT_MS: '0' }, services: ['players', 'wallet'] });
    alice = await register(stack);
    bob = await register(stack);
  });
  afterAll(async () => stack?.close());

  const post = (url: string, payload: unknown, token?: string, apiKey = stack.apiKey) =>
    stack.inject({ method: 'POST', url, headers: jsonApiHeaders(apiKey, token), payload: payload as object });
  const me = (token: string, apiKey = stack.apiKey) =>
    stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(apiKey, token) });
  const claims = (over: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return {
      sub: alice.id,
      app: decodePart(alice.accessToken, 1).app,
      anon: false,
      sid: randomUUID(),
      jti: randomUUID(),
      iat: now,
      exp: now + 600,
      ...over,
    };
  };
  const signWith = (key: { privatePem: string; kid: string }, payload: object, opts: { iss?: string; aud?: string } = {}) =>
    createSigner({
      key: key.privatePem,
      algorithm: 'ES256',
      kid: key.kid,
      iss: opts.iss ?? 'collectible-chest-service',
      aud: opts.aud ?? 'collectible-chest-api',
    })(payload);

  it('logs in at /api/v1/players/login with 200, the player and fresh tokens, without grants', async () => {
    const res = await post('/api/v1/players/login', loginBody(alice.email!));
    expect(res.statusCode, res.body).toBe(200);
    const body = JSON.parse(res.body);
    expectJsonApi(body);
    expect(body.data).toMatchObject({ type: 'player', id: alice.id, attributes: { email: alice.email, is_anonymous: false } });
    expect(Object.keys(body.meta).sort()).toEqual(['access_token', 'created_at', 'expires_in', 'player_type', 'refresh_token', 'token_type']);
    expect(body.meta).toMatchObject({ token_type: 'Bearer', expires_in: 900, player_type: 'registered' });
    // This stack runs without the chests service: the sign-in succeeds and says the chests could not be read.
    expect(body.data.relationships.chests).toEqual({ meta: { available: false } });
    expect((await me(body.meta.access_token)).statusCode).toBe(200);
  });

  it('logs in at the unprefixed /players/login too, with the email in any case', async () => {
    const res = await post('/players/login', loginBody(alice.email!.toUpperCase()));
    expect(res.statusCode, res.body).toBe(200);
    expectJsonApi(JSON.parse(res.body));
    const { apikey: _k, ...noKey } = jsonApiHeaders(stack.apiKey);
    expectError(
      await stack.inject({ method: 'POST', url: '/players/login', headers: noKey, payload: loginBody(alice.email!) }),
      401,
      'missing_api_key',
    );
  });

  it('signs access tokens with ES256, the key id and every required claim', async () => {
    const header = decodePart(alice.accessToken, 0);
    const payload = decodePart(alice.accessToken, 1);
    expect(header).toMatchObject({ alg: 'ES256', kid: serverKey.kid });
    expect(payload).toMatchObject({ sub: alice.id, anon: false, iss: 'collectible-chest-service', aud: 'collectible-chest-api' });
    expect(payload.exp - payload.iat).toBe(900);
    for (const claim of ['app', 'jti', 'sid']) expect(payload[claim]).toEqual(expect.any(String));
  });

  it('answers one generic 401 for a wrong password and for an unknown email', async () => {
    const wrong = expectError(await post('/api/v1/players/login', loginBody(alice.email!, 'Wr0ng!pass')), 401, 'invalid_credentials');
    const unknown = expectError(await post('/api/v1/players/login', loginBody(newEmail('nobody'), STRONG_PASSWORD)), 401, 'invalid_credentials');
    expect(unknown).toEqual(wrong);
  });

  it('answers 422 for a login document of the wrong shape', async () => {
    const errors = expectError(await post('/api/v1/players/login', { data: { type: 'session', attributes: { email: 'x' } } }), 422);
    expect(errors.map((e) => e.source?.pointer).sort()).toEqual(['/data/attributes/password', '/data/type']);
  });

  it('rotates the refresh token on every use', async () => {
    const player = await register(stack);
    const res = await post('/api/v1/players/refresh', refreshBody(player.refreshToken));
    expect(res.statusCode, res.body).toBe(200);
    const body = JSON.parse(res.body);
    expectJsonApi(body);
    expect(body.data.id).toBe(player.id);
    expect(body.meta.refresh_token).not.toBe(player.refreshToken);
    expect(body.meta.access_token).not.toBe(player.accessToken);
    const again = await post('/api/v1/players/refresh', refreshBody(body.meta.refresh_token));
    expect(again.statusCode, again.body).toBe(200);
  });

  it('revokes the whole family when a rotated refresh token is used again after its successor was', async () => {
    const player = await register(stack);
    const first = JSON.parse((await post('/api/v1/players/refresh', refreshBody(player.refreshToken))).body);
    const second = JSON.parse((await post('/api/v1/players/refresh', refreshBody(first.meta.refresh_token))).body);
    // The oldest token comes back although the client moved on: someone holds a copy. The whole family stops working.
    expectError(await post('/api/v1/players/refresh', refreshBody(player.refreshToken)), 401, 'refresh_token_reused');
    expectError(await post('/api/v1/players/refresh', refreshBody(second.meta.refresh_token)), 401, 'refresh_token_revoked');
    // Another login's family is untouched.
    const login = JSON.parse((await post('/api/v1/players/login', loginBody(player.email!))).body);
    expect((await post('/api/v1/players/refresh', refreshBody(login.meta.refresh_token))).statusCode).toBe(200);
  });

  it('answers a refresh retried after a lost answer with a new session, and revokes the successor it never received', async () => {
    const player = await register(stack);
    const lost = JSON.parse((await post('/api/v1/players/refresh', refreshBody(player.refreshToken))).body);
    const retry = await post('/api/v1/players/refresh', refreshBody(player.refreshToken));
    expect(retry.statusCode, retry.body).toBe(200);
    const retried = JSON.parse(retry.body);
    expect(retried.data.id).toBe(player.id);
    expect(retried.meta.refresh_token).not.toBe(lost.meta.refresh_token);
    // One live token per family: the answer that was lost no longer works, the retry's does.
    expectError(await post('/api/v1/players/refresh', refreshBody(lost.meta.refresh_token)), 401, 'refresh_token_revoked');
    expect((await post('/api/v1/players/refresh', refreshBody(retried.meta.refresh_token))).statusCode).toBe(200);
  });

  it('treats the same retry as reuse once REFRESH_REUSE_GRACE_SECONDS have passed', async () => {
    const player = await register(stack);
    const first = JSON.parse((await post('/api/v1/players/refresh', refreshBody(player.refreshToken))).body);
    const db = await dbClient(stack);
    try {
      // The rotation happened 11 s ago (the grace is 10 s).
      await db.query(
        "UPDATE players.refresh_tokens SET rotated_at = rotated_at - interval '11 seconds' WHERE player_id = $1 AND rotated_at IS NOT NULL",
        [player.id],
      );
    } finally {
      await db.end();
    }
    expectError(await post('/api/v1/players/refresh', refreshBody(player.refreshToken)), 401, 'refresh_token_reused');
    expectError(await post('/api/v1/players/refresh', refreshBody(first.meta.refresh_token)), 401, 'refresh_token_revoked');
  });

  it('leaves exactly one live refresh token after two concurrent refreshes with the same token', async () => {
    const player = await register(stack);
    const results = await Promise.all([1, 2].map(() => post('/api/v1/players/refresh', refreshBody(player.refreshToken))));
    // The second is a retry within the grace window: both answer, and the first's successor is replaced.
    expect(results.map((r) => r.statusCode)).toEqual([200, 200]);
    const tokens = results.map((r) => JSON.parse(r.body).meta.refresh_token as string);
    const uses = await Promise.all(tokens.map((t) => post('/api/v1/players/refresh', refreshBody(t))));
    expect(uses.map((r) => r.statusCode).sort()).toEqual([200, 401]);
    expectError(
      uses.find((r) => r.statusCode === 401)!,
      401,
      'refresh_token_revoked',
    );
  });

  it('refuses an unknown refresh token, and an access token used as a refresh token, with 401', async () => {
    expectError(await post('/api/v1/players/refresh', refreshBody('rt_not-a-real-token')), 401, 'invalid_refresh_token');
    expectError(await post('/api/v1/players/refresh', refreshBody(alice.accessToken)), 401, 'invalid_refresh_token');
  });

  it('refuses a refresh token of another app with 401', async () => {
    const other = await createOtherApp(stack, 'Refresh isolation');
    const stranger = await register(stack, { apiKey: other.publishableKey });
    expectError(await post('/api/v1/players/refresh', refreshBody(stranger.refreshToken)), 401, 'invalid_refresh_token');
  });

  it('logs out with 204 and ends the session of the access token and of a given refresh token', async () => {
    const player = await register(stack);
    const second = JSON.parse((await post('/api/v1/players/login', loginBody(player.email!))).body);
    const third = JSON.parse((await post('/api/v1/players/login', loginBody(player.email!))).body);
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/logout',
      headers: jsonApiHeaders(stack.apiKey, player.accessToken),
      payload: refreshBody(second.meta.refresh_token),
    });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expectError(await post('/api/v1/players/refresh', refreshBody(player.refreshToken)), 401, 'refresh_token_revoked');
    expectError(await post('/api/v1/players/refresh', refreshBody(second.meta.refresh_token)), 401, 'refresh_token_revoked');
    expect((await post('/api/v1/players/refresh', refreshBody(third.meta.refresh_token))).statusCode).toBe(200);
  });

  it('logs out without a body too, and needs a Bearer token', async () => {
    const player = await register(stack);
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/logout',
      headers: { apikey: stack.apiKey, authorization: `Bearer ${player.accessToken}` },
    });
    expect(res.statusCode, res.body).toBe(204);
    expectError(await post('/api/v1/players/refresh', refreshBody(player.refreshToken)), 401, 'refresh_token_revoked');
    expectError(await stack.inject({ method: 'POST', url: '/api/v1/players/logout', headers: { apikey: stack.apiKey } }), 401, 'missing_token');
  });

  describe('forged and foreign access tokens get 401', () => {
    it('without a token at all', async () => {
      expectError(await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: { apikey: stack.apiKey } }), 401, 'missing_token');
    });

    it('with alg none', async () => {
      const token = `${b64({ alg: 'none', typ: 'JWT', kid: serverKey.kid })}.${b64(claims())}.`;
      expectError(await me(token), 401, 'invalid_token');
    });

    it('with tampered claims under the original signature', async () => {
      const [h, , s] = alice.accessToken.split('.');
      const tampered = `${h}.${b64({ ...decodePart(alice.accessToken, 1), sub: bob.id })}.${s}`;
      expectError(await me(tampered), 401, 'invalid_token');
    });

    it('with an HMAC signature keyed by the public key (algorithm confusion)', async () => {
      const token = createSigner({ key: serverKey.publicPem, algorithm: 'HS256', kid: serverKey.kid })(
        claims({ iss: 'collectible-chest-service', aud: 'collectible-chest-api' }),
      );
      expectError(await me(token), 401, 'invalid_token');
    });

    it('when expired, even though correctly signed', async () => {
      const past = Math.floor(Date.now() / 1000) - 3600;
      expectError(await me(signWith(serverKey, claims({ iat: past - 900, exp: past }))), 401, 'token_expired');
    });

    it('when signed by a foreign key, under our kid or its own', async () => {
      const foreign = p256();
      expectError(await me(signWith({ privatePem: foreign.privatePem, kid: serverKey.kid }, claims())), 401, 'invalid_token');
      expectError(await me(signWith(foreign, claims())), 401, 'invalid_token');
    });

    it('with the wrong issuer or audience', async () => {
      expectError(await me(signWith(serverKey, claims(), { iss: 'someone-else' })), 401, 'invalid_token');
      expectError(await me(signWith(serverKey, claims(), { aud: 'another-api' })), 401, 'invalid_token');
    });

    it('when issued for another app', async () => {
      const other = await createOtherApp(stack, 'Token isolation');
      const stranger = await register(stack, { apiKey: other.publishableKey });
      expect((await me(stranger.accessToken, other.publishableKey)).statusCode).toBe(200);
      expectError(await me(stranger.accessToken), 401, 'invalid_token');
    });

    it('while a correctly signed token of our own passes', async () => {
      const res = await me(signWith(serverKey, claims()));
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.parse(res.body).data.id).toBe(alice.id);
    });
  });
});

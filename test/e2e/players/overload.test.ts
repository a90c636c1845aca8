import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { balances, createOtherApp, dbClient, loginBody, newEmail, register, registrationBody, STRONG_PASSWORD } from './support.js';

/**
 * Bursts against a players service with one password slot and a short queue, at the real
 * (default) argon2 cost, behind a gateway whose general NATS bound (1 s) is shorter than a
 * registration may take: every answer is the work's result or a 503 with Retry-After, never a
 * timeout, and a registration retried with its Idempotency-Key answers like the first.
 */
describe('registration and login under overload', () => {
  const QUEUE_DEPTH = 20;
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      env: {
        ARGON2_MEMORY_KIB: '19456',
        ARGON2_TIME_COST: '2',
        ARGON2_CONCURRENCY: '1',
        ARGON2_QUEUE_DEPTH: String(QUEUE_DEPTH),
        ARGON2_QUEUE_WAIT_MS: '10000',
        NATS_REQUEST_TIMEOUT_MS: '1000',
        GRANT_WAIT_MS: '1500',
      },
    });
    // The apikey is resolved (and cached) once, outside the bursts.
    await register(stack);
  });
  afterAll(async () => stack?.close());

  const registerWith = (email: string, key?: string, password = STRONG_PASSWORD, token?: string) =>
    stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: { ...jsonApiHeaders(stack.apiKey, token), ...(key ? { 'idempotency-key': key } : {}) },
      payload: registrationBody(email, password),
    });

  /** A 503 as promised: `overloaded`, Retry-After in whole seconds, the same number in the error's meta. */
  function expectOverloaded(res: LightMyRequestResponse) {
    const [err] = expectError(res, 503, 'overloaded');
    const retryAfter = String(res.headers['retry-after']);
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect((err as { meta?: unknown }).meta).toEqual({ retry_after_seconds: Number(retryAfter) });
  }

  it('answers a burst of 60 registrations with 201 or 503 overloaded, never a timeout; a 503 did nothing', { timeout: 180_000 }, async () => {
    const attempts = Array.from({ length: 60 }, (_, i) => ({ email: newEmail(`burst${i}`), key: `burst-${i}-${Date.now()}` }));
    const answers = await Promise.all(
      attempts.map(async (a) => {
        const res = await registerWith(a.email, a.key);
        return { ...a, res };
      }),
    );
    const statuses = answers.map((a) => a.res.statusCode);
    expect(
      statuses.filter((s) => s !== 201 && s !== 503),
      answers.find((a) => ![201, 503].includes(a.res.statusCode))?.res.body,
    ).toEqual([]);
    const created = answers.filter((a) => a.res.statusCode === 201);
    const refused = answers.filter((a) => a.res.statusCode === 503);
    // One running and QUEUE_DEPTH waiting at a time (a few more as the first ones finish): most of the burst is refused.
    expect(created.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) expectOverloaded(a.res);

    // Every 201 made its player, with all its grants; no 503 made anything.
    const db = await dbClient(stack);
    try {
      const { rows } = await db.query<{ email: string; id: string }>('SELECT email, id FROM players.players WHERE email = ANY($1)', [
        answers.map((a) => a.email),
      ]);
      const made = new Map(rows.map((r) => [r.email, r.id]));
      expect(created.map((a) => made.get(a.email))).toEqual(created.map((a) => JSON.parse(a.res.body).data.id));
      expect(refused.filter((a) => made.has(a.email)).map((a) => a.email)).toEqual([]);
      const keys = await db.query<{ key: string }>('SELECT key FROM players.registration_keys WHERE key = ANY($1)', [answers.map((a) => a.key)]);
      expect(keys.rows.map((r) => r.key).sort()).toEqual(created.map((a) => a.key).sort());
    } finally {
      await db.end();
    }
    for (const a of created) {
      const body = JSON.parse(a.res.body);
      expectJsonApi(body);
      const token = body.meta.access_token;
      await eventually(async () => {
        const b = await balances(stack, token);
        expect([Number(b.coins), Number(b.gems)]).toEqual([1500, 15]);
        const chests = await stack.inject({ method: 'GET', url: '/api/v1/players/me/chests', headers: jsonApiHeaders(stack.apiKey, token) });
        expect(JSON.parse(chests.body).data.map((c: { id: string }) => c.id)).toContain(body.meta.welcome_bonus.starter_chest);
      }, 20_000);
    }

    // Retried with the same key, email and password: the first answer again, with new tokens.
    for (const a of created) {
      const again = await registerWith(a.email, a.key);
      expect(again.statusCode, again.body).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      const [first, second] = [JSON.parse(a.res.body), JSON.parse(again.body)];
      expectJsonApi(second);
      expect(second.data).toEqual(first.data);
      const grants = (m: Record<string, unknown>) => ({ initial: m.initial_currency, bonus: m.welcome_bonus, type: m.player_type });
      expect(grants(second.meta)).toEqual(grants(first.meta));
      expect(second.meta.refresh_token).not.toBe(first.meta.refresh_token);
      expect(Number((await balances(stack, second.meta.access_token)).coins)).toBe(1500);
    }
    // A refused one retried later is simply made (it was never started).
    for (const a of refused.slice(0, 3)) {
      const later = await registerWith(a.email, a.key);
      expect(later.statusCode, later.body).toBe(201);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
    }
  });

  it('answers a registration that takes longer than NATS_REQUEST_TIMEOUT_MS with its result, not a 504', { timeout: 180_000 }, async () => {
    // With the wallet away, registration waits the whole GRANT_WAIT_MS (1.5 s) for its credits.
    await stack.stopService('wallet');
    let res: LightMyRequestResponse;
    const started = performance.now();
    try {
      res = await registerWith(newEmail('slow'), `slow-${Date.now()}`);
    } finally {
      await stack.startService('wallet');
    }
    expect(performance.now() - started).toBeGreaterThan(1000);
    expect(res.statusCode, res.body).toBe(201);
    await eventually(async () => expect(Number((await balances(stack, JSON.parse(res.body).meta.access_token)).coins)).toBe(1500), 20_000);
  });

  it('answers 409 for the key with another password, email or token, and email_taken without the key', async () => {
    const email = newEmail('keyed');
    const key = `keyed-${Date.now()}`;
    const first = await registerWith(email, key);
    expect(first.statusCode, first.body).toBe(201);
    const guest = await stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: { apikey: stack.apiKey } });
    const guestToken = JSON.parse(guest.body).meta.access_token;
    const [err] = expectError(await registerWith(email, key, 'Other!pass1'), 409, 'idempotency_key_reused');
    expect(err!.source).toEqual({ header: 'Idempotency-Key' });
    expectError(await registerWith(newEmail(), key), 409, 'idempotency_key_reused');
    expectError(await registerWith(email, key, STRONG_PASSWORD, guestToken), 409, 'idempotency_key_reused');
    // Without the key, or with another, an email already registered is taken, exactly as before.
    expectError(await registerWith(email), 409, 'email_taken');
    expectError(await registerWith(email, `${key}-other`), 409, 'email_taken');
    // Nothing of those changed the player: its password is still the first one.
    const login = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/login',
      headers: jsonApiHeaders(stack.apiKey),
      payload: loginBody(email),
    });
    expect([login.statusCode, JSON.parse(login.body).data.id]).toEqual([200, JSON.parse(first.body).data.id]);
  });

  it('answers two concurrent registrations with the same key and body as one: made once, the other its replay', async () => {
    const email = newEmail('twin');
    const key = `twin-${Date.now()}`;
    const [a, b] = await Promise.all([registerWith(email, key), registerWith(email, key)]);
    expect([a.statusCode, b.statusCode], `${a.body} ${b.body}`).toEqual([201, 201]);
    expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].sort()).toEqual(['true', undefined]);
    expect(JSON.parse(a.body).data.id).toBe(JSON.parse(b.body).data.id);
    expect(JSON.parse(a.body).meta.welcome_bonus).toEqual(JSON.parse(b.body).meta.welcome_bonus);
  });

  it('forgets a key after IDEMPOTENCY_KEY_TTL_HOURS: its email is taken again, and the key can make another player', async () => {
    const email = newEmail('old-key');
    const key = `old-key-${Date.now()}`;
    expect((await registerWith(email, key)).statusCode).toBe(201);
    const db = await dbClient(stack);
    try {
      await db.query("UPDATE players.registration_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [key]);
    } finally {
      await db.end();
    }
    expectError(await registerWith(email, key), 409, 'email_taken');
    const other = await registerWith(newEmail('new-key-use'), key);
    expect([other.statusCode, other.headers['idempotent-replayed']]).toEqual([201, undefined]);
  });

  it('keeps registration keys per app: the same key and body in another app makes that app its own player', async () => {
    const other = await createOtherApp(stack, 'Keyed game');
    const email = newEmail('two-apps');
    const key = `two-apps-${Date.now()}`;
    const send = (apiKey: string) =>
      stack.inject({
        method: 'POST',
        url: '/api/v1/players/register',
        headers: { ...jsonApiHeaders(apiKey), 'idempotency-key': key },
        payload: registrationBody(email),
      });
    const mine = await send(stack.apiKey);
    const theirs = await send(other.publishableKey);
    expect([mine.statusCode, theirs.statusCode, theirs.headers['idempotent-replayed']]).toEqual([201, 201, undefined]);
    expect(JSON.parse(theirs.body).data.id).not.toBe(JSON.parse(mine.body).data.id);
  });

  it('replays a guest upgrade retried with its key and the same token', async () => {
    const guest = await stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: { apikey: stack.apiKey } });
    const g = JSON.parse(guest.body);
    const email = newEmail('upgrade');
    const key = `upgrade-${Date.now()}`;
    const first = await registerWith(email, key, STRONG_PASSWORD, g.meta.access_token);
    expect(first.statusCode, first.body).toBe(201);
    const again = await registerWith(email, key, STRONG_PASSWORD, g.meta.access_token);
    expect([again.statusCode, again.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(JSON.parse(again.body).data.id).toBe(g.data.id);
    expect(JSON.parse(again.body).meta.welcome_bonus).toEqual(JSON.parse(first.body).meta.welcome_bonus);
    expect(Number((await balances(stack, JSON.parse(again.body).meta.access_token)).coins)).toBe(1500);
  });

  it('answers a burst of 40 logins with 200, 401 or 503 overloaded, never a timeout', { timeout: 180_000 }, async () => {
    const player = await register(stack);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        stack.inject({
          method: 'POST',
          url: '/api/v1/players/login',
          headers: jsonApiHeaders(stack.apiKey),
          payload: loginBody(i % 4 === 0 ? newEmail('nobody') : player.email!, i % 4 === 1 ? 'Wr0ng!pass' : STRONG_PASSWORD),
        }),
      ),
    );
    const unexpected = answers.filter((r, i) => r.statusCode !== 503 && r.statusCode !== (i % 4 < 2 ? 401 : 200));
    expect(unexpected.map((r) => `${r.statusCode} ${r.body.slice(0, 200)}`)).toEqual([]);
    const refused = answers.filter((r) => r.statusCode === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expectOverloaded(r);
  });
});

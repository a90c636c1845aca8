import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChestGrant, NOTIFY_HEADER } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { balances, dbClient, newEmail, register, registrationBody, STRONG_PASSWORD } from './support.js';
import { createGuest, inventory, open, registerPlayer } from '../../../services/chests/test/support/chests.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('registration', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { GRANT_WAIT_MS: '3000' } });
  });
  afterAll(async () => stack?.close());

  const post = (payload: unknown, headers = jsonApiHeaders(stack.apiKey), url = '/api/v1/players/register') =>
    stack.inject({ method: 'POST', url, headers, payload: payload as object });

  it('answers 201 with the player, its starter chest, tokens and grants exactly as the spec shows', async () => {
    const email = newEmail();
    const res = await post(registrationBody(email));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['content-type']).toContain('application/vnd.api+json');
    const body = JSON.parse(res.body);
    expectJsonApi(body);
    const starter = body.meta.welcome_bonus.starter_chest;
    expect(starter).toMatch(UUID);
    expect(body.data).toEqual({
      type: 'player',
      id: expect.stringMatching(UUID),
      attributes: { email, is_anonymous: false },
      relationships: { chests: { data: [{ type: 'chest', id: starter }] } },
      links: { self: expect.stringMatching(/^http:\/\/[^/]+\/api\/v1\/players\/[0-9a-f-]{36}$/) },
    });
    expect(body.data.links.self).toMatch(new RegExp(`/players/${body.data.id}$`));
    expect(body.included).toEqual([]);
    expect(body.meta).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refresh_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      player_type: 'registered',
      initial_currency: { coins: 1000, gems: 10 },
      welcome_bonus: { coins: 500, gems: 5, starter_chest: starter },
    });
    expect(body.meta.refresh_token).not.toBe(body.meta.access_token);
  });

  it('shows the initial currency plus the welcome bonus in the balances right after registering', async () => {
    const player = await register(stack);
    // No polling: registration waits for the wallet to apply the grants (read-your-writes).
    const b = await balances(stack, player.accessToken);
    expect(Number(b.coins)).toBe(1500);
    expect(Number(b.gems)).toBe(15);
  });

  it('shows every player its grants right away when twenty register at once', async () => {
    const players = await Promise.all(Array.from({ length: 20 }, () => register(stack)));
    const all = await Promise.all(players.map((p) => balances(stack, p.accessToken)));
    expect(all.map((b) => [Number(b.coins), Number(b.gems)])).toEqual(players.map(() => [1500, 15]));
  });

  it('sends the starter chest grant durably, with the inventory id of the response', async () => {
    const player = await register(stack);
    const db = await dbClient(stack);
    try {
      const { rows } = await db.query(
        `SELECT payload, published_at FROM players.outbox WHERE subject = 'grants.chests.grant' AND payload->>'playerId' = $1`,
        [player.id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].payload).toMatchObject({
        inventoryChestId: player.body.meta.welcome_bonus!.starter_chest,
        chestTypeId: 'wooden-chest',
        source: 'welcome',
      });
      // Published before the answer; marked so in the outbox a moment later (marks are batched).
      await eventually(async () => {
        const marked = await db.query(`SELECT published_at FROM players.outbox WHERE subject = 'grants.chests.grant' AND payload->>'playerId' = $1`, [
          player.id,
        ]);
        expect(marked.rows[0].published_at).not.toBeNull();
      });
    } finally {
      await db.end();
    }
  });

  it('stores the password as an argon2id hash, never in clear', async () => {
    const player = await register(stack);
    const db = await dbClient(stack);
    try {
      const { rows } = await db.query('SELECT password_hash FROM players.players WHERE id = $1', [player.id]);
      expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);
      expect(rows[0].password_hash).not.toContain(STRONG_PASSWORD);
    } finally {
      await db.end();
    }
  });

  it('limits the player to the fields asked for with fields[player]', async () => {
    const res = await post(registrationBody(newEmail()), jsonApiHeaders(stack.apiKey), '/api/v1/players/register?fields%5Bplayer%5D=id,email');
    expect(res.statusCode, res.body).toBe(201);
    const body = JSON.parse(res.body);
    expectJsonApi(body);
    expect(Object.keys(body.data.attributes)).toEqual(['email']);
    expect(body.meta.access_token).toBeTypeOf('string');
  });

  it('answers 400 for a field that cannot be selected', async () => {
    const res = await post(registrationBody(newEmail()), jsonApiHeaders(stack.apiKey), '/api/v1/players/register?fields%5Bplayer%5D=password');
    const [err] = expectError(res, 400, 'unsupported_fields');
    expect(err!.source).toEqual({ parameter: 'fields[player]' });
  });

  it('answers 409 email_taken for an email already registered in the app, whatever its case', async () => {
    const email = newEmail('taken');
    await register(stack, { email });
    const [err] = expectError(await post(registrationBody(email.toUpperCase())), 409, 'email_taken');
    expect(err!.source).toEqual({ pointer: '/data/attributes/email' });
  });

  it('still answers 201 while the wallet is down, and the credits land when it returns', async () => {
    const pendingRegistrations = async () => {
      const metric = await stack.services.players!.deps.metrics.registry.getSingleMetric('ccs_saga_outcomes_total')!.get();
      return metric.values.find((v) => v.labels.saga === 'registration' && v.labels.outcome === 'grant_pending')?.value ?? 0;
    };
    await stack.stopService('wallet');
    let player;
    try {
      const before = await pendingRegistrations();
      player = await register(stack);
      // The answer came from the end of the saga's bounded wait for the credits (grant_pending),
      // not from the wallet: the wait is bounded by the saga, whatever the machine's speed.
      expect((await pendingRegistrations()) - before).toBe(1);
    } finally {
      await stack.startService('wallet');
    }
    await eventually(async () => {
      const b = await balances(stack, player.accessToken);
      expect(Number(b.coins)).toBe(1500);
      expect(Number(b.gems)).toBe(15);
    }, 20_000);
  });
});

describe('registration while chests is held back', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // The answers wait for their grants as long as the test holds chests back (released by
    // progress, below), however slow the machine: the bounds only matter if a grant is lost.
    stack = await startStack({ env: { GRANT_WAIT_MS: '30000', CREDENTIALS_TIMEOUT_MS: '60000' } });
  });
  afterAll(async () => stack?.close());

  it('lets thirty players registering at once, and ten guests, open their starter chest and see it in the inventory right away', async () => {
    // The chests service's inserts are held back (a table lock) while they register, so that an
    // answer sent before the chest is in the inventory would show here as a 404.
    const db = await dbClient(stack);
    const asked = new Set<string>();
    const grants = stack.nc.subscribe(`${stack.env.NATS_PREFIX}.${ChestGrant.subject}`, {
      callback: (_err, msg) => {
        if (msg.headers?.get(NOTIFY_HEADER)) asked.add(msg.headers.get('Nats-Msg-Id'));
      },
    });
    try {
      await db.query('BEGIN');
      await db.query('LOCK TABLE chests.inventory_chests IN SHARE MODE');
      const newcomers = [...Array.from({ length: 30 }, () => registerPlayer(stack)), ...Array.from({ length: 10 }, () => createGuest(stack))];
      // Half read the inventory first, half open at once.
      const answers = newcomers.map(async (joining, i) => {
        const p = await joining;
        const shown = i % 2 ? (await inventory(stack, p)).data.map((c: { id: string }) => c.id) : [p.starterChestId];
        return { p, shown, res: await open(stack, p, p.starterChestId) };
      });
      let ended = false;
      const all = Promise.all(answers).finally(() => (ended = true));
      // Released once every starter chest grant went out asking for a notice of its application (the
      // registrations wait for it) and chests is held back from inserting them; or once every answer came.
      await eventually(async () => {
        if (ended) return;
        expect(asked.size).toBe(40);
        const { rows } = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'chests.inventory_chests'::regclass",
        );
        expect(rows[0]!.n).toBeGreaterThan(0);
      }, 20_000);
      await db.query('COMMIT');
      for (const { p, shown, res } of await all) {
        expect(shown).toEqual([p.starterChestId]);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data.chest_id).toBe(p.starterChestId);
      }
    } finally {
      grants.unsubscribe();
      await db.end();
    }
  });
});

describe('registration input checks', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['players'], env: { GRANT_WAIT_MS: '0' } });
  });
  afterAll(async () => stack?.close());

  const attempt = (payload: unknown, headers = jsonApiHeaders(stack.apiKey)) =>
    stack.inject({ method: 'POST', url: '/api/v1/players/register', headers, payload: payload as object });
  const failures = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) =>
    expectError(res, 422).map((e) => ({ code: e.code, pointer: e.source?.pointer }));

  const password = (pw: string) => attempt(registrationBody(newEmail(), pw));

  it.each([
    ['Sh0rt!', 'password_too_short'],
    ['NOLOWER1!', 'password_lowercase'],
    ['noupper1!', 'password_uppercase'],
    ['NoDigits!', 'password_digit'],
    ['NoSpecial1', 'password_special'],
  ])('answers 422 for the password %s with %s on /data/attributes/password', async (pw, code) => {
    expect(failures(await password(pw))).toEqual([{ code, pointer: '/data/attributes/password' }]);
  });

  it('answers one error per failing password rule', async () => {
    const codes = failures(await password('abc')).map((f) => f.code);
    expect(codes.sort()).toEqual(['password_digit', 'password_special', 'password_too_short', 'password_uppercase']);
  });

  it('answers 422 on password_confirmation when it differs from the password', async () => {
    const res = await attempt(registrationBody(newEmail(), STRONG_PASSWORD, 'Str0ng!pasS'));
    expect(failures(res)).toEqual([{ code: 'password_confirmation_mismatch', pointer: '/data/attributes/password_confirmation' }]);
  });

  it.each([
    ['', 'email_blank'],
    ['no-at-sign.example.com', 'email_at_sign'],
    ['two@@example.com', 'email_at_sign'],
    ['@example.com', 'email_at_sign'],
    ['someone@localhost', 'email_domain'],
    ['someone@example.', 'email_domain'],
    ['some one@example.com', 'email_whitespace'],
  ])('answers 422 for the email %j with %s on /data/attributes/email', async (email, code) => {
    expect(failures(await attempt(registrationBody(email)))).toEqual([{ code, pointer: '/data/attributes/email' }]);
  });

  it('reports email and password failures together', async () => {
    const res = await attempt(registrationBody('bad', 'weakpass1', 'other'));
    expect(
      failures(res)
        .map((f) => f.pointer)
        .sort(),
    ).toEqual(['/data/attributes/email', '/data/attributes/password', '/data/attributes/password', '/data/attributes/password_confirmation']);
  });

  it('answers 422 on /data/type when the resource type is not player', async () => {
    const body = registrationBody(newEmail());
    const res = await attempt({ data: { ...body.data, type: 'user' } });
    expect(failures(res)).toEqual([{ code: 'invalid_field', pointer: '/data/type' }]);
  });

  it('answers 422 naming every missing or mistyped attribute', async () => {
    const res = await attempt({ data: { type: 'player', attributes: { email: 42 }, relationships: {} } });
    expect(
      failures(res)
        .map((f) => f.pointer)
        .sort(),
    ).toEqual(['/data/attributes/email', '/data/attributes/password', '/data/attributes/password_confirmation']);
  });

  it('answers 422 on /data when the document has no primary data', async () => {
    expect(failures(await attempt({ meta: {} }))).toEqual([{ code: 'invalid_field', pointer: '/data' }]);
  });

  it('answers 400 for malformed JSON and 415 for a plain JSON body', async () => {
    expectError(
      await stack.inject({ method: 'POST', url: '/api/v1/players/register', headers: jsonApiHeaders(stack.apiKey), payload: '{"data":' }),
      400,
      'malformed_json',
    );
    const headers = { ...jsonApiHeaders(stack.apiKey), 'content-type': 'application/json' };
    expectError(await attempt(registrationBody(newEmail()), headers), 415, 'unsupported_media_type');
  });

  it('answers 401 without an apikey or with an unknown one', async () => {
    const { apikey: _drop, ...noKey } = jsonApiHeaders(stack.apiKey);
    expectError(await attempt(registrationBody(newEmail()), noKey), 401, 'missing_api_key');
    expectError(await attempt(registrationBody(newEmail()), jsonApiHeaders('pk_unknown_key_0000000000')), 401, 'invalid_api_key');
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { connect, type NatsConnection } from 'nats';
import { Bus, chestTypeId } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { TEST_PASSWORD } from '../../support/register.js';
import { buildApp } from '../../../services/gateway/src/app.js';
import { GatewayConfigSchema } from '../../../services/gateway/src/config.js';
import { catalogIds, createApp, purchase } from '../../../services/chests/test/support/chests.js';
import { runAdmin } from '../../../tools/admin/src/cli.js';

/**
 * The support desk's admin API (docs/operations.md, "Admin API"): locking a player (their token
 * refused at once on two gateway replicas, reads and writes alike, no login or refresh; unlocking
 * restores all of it), ending a player's sessions, finding players by the start of their email
 * (any case, paged, never another app's), granting chests once per reference, the whole player
 * for support, and an audit log of actions (with their notes) but not of reads. Replica B keeps
 * what it learns of locks for ten minutes: whatever it shows change, a notice changed.
 */
describe('the support desk: find, see, lock, end sessions, grant', () => {
  let stack: TestStack;
  let replicaB: FastifyInstance;
  let ncB: NatsConnection;
  let game: { appId: string; publishableKey: string; secretKey: string };
  let other: { appId: string; publishableKey: string; secretKey: string };
  const run = randomUUID().slice(0, 8);

  beforeAll(async () => {
    stack = await startStack({ env: { PLAYER_LOCKS_TTL_MS: '600000' } });
    [game, other] = await Promise.all([createApp(stack), createApp(stack)]);
    const config = GatewayConfigSchema.parse(stack.env);
    ncB = await connect({ servers: stack.env.NATS_URL });
    const busB = new Bus(ncB, config.NATS_PREFIX, config.NATS_REQUEST_TIMEOUT_MS, { readTimeoutMs: config.NATS_READ_TIMEOUT_MS });
    replicaB = await buildApp({ config, bus: busB, redis: stack.redis });
    await replicaB.ready();
  }, 60_000);
  afterAll(async () => {
    await replicaB?.close();
    await ncB?.close();
    await stack?.close();
  });

  const replicaA = () => stack.app;
  type Replica = () => FastifyInstance;
  const B: Replica = () => replicaB;

  /** A call through a replica: the app's publishable key (or `key`), a token when given, a JSON:API body when given. */
  const call = (replica: Replica, method: 'GET' | 'POST' | 'PATCH', url: string, o: { token?: string; body?: unknown; key?: string } = {}) =>
    replica().inject({
      method,
      url,
      headers: jsonApiHeaders(o.key ?? game.publishableKey, o.token),
      ...(o.body === undefined ? {} : { payload: JSON.stringify(o.body) }),
    });
  /** An admin API call with the app's secret key (or `key`) through replica A. */
  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, key = game.secretKey) => call(replicaA, method, url, { key, body });
  const ok = (res: LightMyRequestResponse, status = 200) => {
    expect(res.statusCode, res.body).toBe(status);
    const body = res.json();
    expectJsonApi(body);
    return body;
  };

  /** Registers a player with this email in `appKey`'s app: id, tokens, email. */
  async function register(email: string, appKey = game.publishableKey) {
    const body = ok(
      await call(replicaA, 'POST', '/api/v1/players/register', {
        key: appKey,
        body: { data: { type: 'player', attributes: { email, password: TEST_PASSWORD, password_confirmation: TEST_PASSWORD }, relationships: {} } },
      }),
      201,
    );
    return { id: body.data.id as string, token: body.meta.access_token as string, refresh: body.meta.refresh_token as string, email };
  }
  const login = (replica: Replica, email: string) =>
    call(replica, 'POST', '/api/v1/players/login', { body: { data: { type: 'player', attributes: { email, password: TEST_PASSWORD } } } });
  const refresh = (replica: Replica, token: string) =>
    call(replica, 'POST', '/api/v1/players/refresh', { body: { data: { type: 'session', attributes: { refresh_token: token } } } });
  const privacy = (replica: Replica, token: string, value: 'public' | 'private') =>
    call(replica, 'PATCH', '/api/v1/players/me', { token, body: { data: { type: 'player', attributes: { privacy: value } } } });
  /** The audit log's entries (attributes), newest first. */
  const audit = async (key = game.secretKey) =>
    (ok(await admin('GET', '/api/v1/admin/audit?page[limit]=100', undefined, key)).data as { attributes: Record<string, unknown> }[]).map(
      (e) => e.attributes,
    );

  it('locks a player: their token answers 403 player_locked at once on both replicas, reads and writes, and no token is issued; unlocking restores it', async () => {
    const p = await register(`lock-${run}@example.com`);
    // Both replicas have read the player's lock (not locked) and keep it.
    for (const r of [replicaA, B]) ok(await call(r, 'GET', '/api/v1/players/me', { token: p.token }));

    const locked = ok(await admin('POST', `/api/v1/admin/players/${p.id}/lock`, { meta: { note: 'Ticket 1: fraud review' } }));
    expect(locked.data).toMatchObject({ type: 'player', id: p.id, attributes: { locked: true } });
    expect(locked.meta).toEqual({ changed: true });
    for (const r of [B, replicaA]) {
      expectError(await call(r, 'GET', '/api/v1/players/me', { token: p.token }), 403, 'player_locked');
      expectError(await privacy(r, p.token, 'private'), 403, 'player_locked');
      // An optional token too: the catalog with it is refused, without it served.
      expectError(await call(r, 'GET', '/api/v1/chests', { token: p.token }), 403, 'player_locked');
      ok(await call(r, 'GET', '/api/v1/chests'));
      expectError(await login(r, p.email), 403, 'player_locked');
      expectError(await refresh(r, p.refresh), 403, 'player_locked');
    }
    // A wrong password is still the one generic 401: the lock is told only to whoever knows it.
    const wrong = await call(B, 'POST', '/api/v1/players/login', {
      body: { data: { type: 'player', attributes: { email: p.email, password: 'Wr0ng!pass' } } },
    });
    expectError(wrong, 401, 'invalid_credentials');
    // Locking again changes nothing; the admin read shows it.
    expect(ok(await admin('POST', `/api/v1/admin/players/${p.id}/lock`)).meta).toEqual({ changed: false });
    expect(ok(await admin('GET', `/api/v1/admin/players/${p.id}`)).data.attributes.locked_at).toBe(locked.data.attributes.locked_at);
    expectError(await admin('POST', `/api/v1/admin/players/${p.id}/lock`, undefined, other.secretKey), 404, 'player_not_found');

    // Unlocked through B, the player's next requests through A pass, and the kept session refreshes.
    const unlocked = ok(
      await call(B, 'POST', `/api/v1/admin/players/${p.id}/unlock`, { key: game.secretKey, body: { meta: { note: 'Ticket 1: closed' } } }),
    );
    expect(unlocked.data.attributes).toEqual({ locked: false, locked_at: null });
    ok(await call(replicaA, 'GET', '/api/v1/players/me', { token: p.token }));
    ok(await privacy(B, p.token, 'private'));
    ok(await refresh(replicaA, p.refresh));
    ok(await login(B, p.email));
  });

  it('locks and unlocks from the command line (npm run admin -- lock-player, unlock-player), by email', async () => {
    const p = await register(`cli-lock-${run}@example.com`);
    ok(await call(B, 'GET', '/api/v1/players/me', { token: p.token }));
    const admin = async (argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (l: string) => out.push(l), progress: (l: string) => err.push(l) };
      const code = await runAdmin(argv, { bus: stack.bus, io, maxPayload: stack.nc.info!.max_payload });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const lockRun = await admin(['lock-player', '--app', game.appId, '--player', p.email.toUpperCase()]);
    expect(lockRun.code, lockRun.err).toBe(0);
    expect(lockRun.out).toContain(`Locked player ${p.id}`);
    expectError(await call(B, 'GET', '/api/v1/players/me', { token: p.token }), 403, 'player_locked');
    const again = await admin(['lock-player', '--app', game.appId, '--player', p.id, '--json']);
    expect(JSON.parse(again.out)).toMatchObject({ playerId: p.id, locked: true, changed: false });
    const unlockRun = await admin(['unlock-player', '--app', game.appId, '--player', p.email]);
    expect(unlockRun.code, unlockRun.err).toBe(0);
    expect(unlockRun.out).toContain(`Unlocked player ${p.id}`);
    ok(await call(B, 'GET', '/api/v1/players/me', { token: p.token }));
    const missing = await admin(['lock-player', '--app', game.appId, '--player', `nobody-${run}@example.com`]);
    expect([missing.code, missing.err]).toEqual([1, `App ${game.appId} has no player "nobody-${run}@example.com".`]);
  });

  it('ends every session of a player: each refresh token is refused after, and the admin read shows none active', async () => {
    const p = await register(`sessions-${run}@example.com`);
    const second = ok(await login(replicaA, p.email));
    const third = ok(await login(B, p.email));
    const before = ok(await admin('GET', `/api/v1/admin/players/${p.id}`)).data.attributes.sessions;
    expect([before.total, before.active]).toEqual([3, 3]);
    expect(before.latest.map((s: { active: boolean }) => s.active)).toEqual([true, true, true]);

    const revoked = ok(await admin('POST', `/api/v1/admin/players/${p.id}/sessions/revoke`, { meta: { note: 'Ticket 2: phone stolen' } }));
    expect(revoked.data).toEqual({ type: 'session_revocation', id: p.id, attributes: { revoked_sessions: 3 } });
    for (const token of [p.refresh, second.meta.refresh_token, third.meta.refresh_token])
      expectError(await refresh(replicaA, token), 401, 'refresh_token_revoked');
    const after = ok(await admin('GET', `/api/v1/admin/players/${p.id}`)).data.attributes.sessions;
    expect([after.total, after.active]).toEqual([3, 0]);
    expect(after.latest.every((s: { revoked_at: string | null }) => s.revoked_at !== null)).toBe(true);
    // A new login is a new session; another app's key finds no such player.
    ok(await login(replicaA, p.email));
    expect(ok(await admin('GET', `/api/v1/admin/players/${p.id}`)).data.attributes.sessions.active).toBe(1);
    expectError(await admin('POST', `/api/v1/admin/players/${p.id}/sessions/revoke`, undefined, other.secretKey), 404, 'player_not_found');
    expectError(await admin('POST', `/api/v1/admin/players/${p.id}/sessions/revoke`, { meta: { note: '' } }), 422, 'invalid_field');
  });

  it("finds players by the start of their email in any case, a page at a time, never another app's; lists the newest", async () => {
    const emails = [`Finder.${run}.Alice@example.com`, `finder.${run}.ALBERT@example.com`, `finder.${run}.bob@example.com`];
    const players = [];
    for (const e of emails) players.push(await register(e));
    await register(`finder.${run}.alina@example.com`, other.publishableKey);
    const search = async (prefix: string, query = '', key = game.secretKey) =>
      ok(await admin('POST', `/api/v1/admin/players/search${query}`, { data: { type: 'player_search', attributes: { email_prefix: prefix } } }, key));

    const found = await search(`FINDER.${run}.al`);
    expect(found.data.map((p: { attributes: { email: string } }) => p.attributes.email)).toEqual([emails[1], emails[0]]);
    expect(found.meta).toEqual({ total_count: 2, page: { limit: 20, offset: 0 } });
    expect(found.data[0]).toMatchObject({ type: 'player', id: players[1]!.id, attributes: { is_anonymous: false, locked_at: null } });
    const page2 = await search(`finder.${run}.`, '?page[limit]=2&page[offset]=2');
    expect(page2.data.map((p: { id: string }) => p.id)).toEqual([players[2]!.id]);
    expect(page2.meta.total_count).toBe(3);
    // LIKE's wildcards match only themselves; the other app finds only its own player.
    expect((await search(`finder.${run}_`)).data).toEqual([]);
    expect((await search(`finder.${run}.%`)).data).toEqual([]);
    expect((await search(`finder.${run}.`, '', other.secretKey)).data.map((p: { attributes: { email: string } }) => p.attributes.email)).toEqual([
      `finder.${run}.alina@example.com`,
    ]);
    expectError(
      await admin('POST', '/api/v1/admin/players/search', { data: { type: 'player_search', attributes: { email_prefix: ' ' } } }),
      422,
      'invalid_field',
    );

    // The newest first, with links to the other pages.
    const newest = ok(await admin('GET', '/api/v1/admin/players?page[limit]=2'));
    expect(newest.data.map((p: { id: string }) => p.id)).toEqual([players[2]!.id, players[1]!.id]);
    expect(newest.meta.total_count).toBeGreaterThanOrEqual(3);
    expect(newest.links.next).toContain('page%5Boffset%5D=2');
  });

  it('grants chests once per reference, by slug or catalog id, to the inventory', async () => {
    const p = await register(`grant-${run}@example.com`);
    const grant = (attributes: Record<string, unknown>, key = game.secretKey) =>
      admin('POST', `/api/v1/admin/players/${p.id}/chests`, { data: { type: 'chest_grant', attributes }, meta: { note: 'Ticket 3: outage' } }, key);
    const first = ok(await grant({ chest_type: 'silver-chest', quantity: 2, reference: `outage-${run}` }), 201);
    expect(first.data.attributes).toMatchObject({ chest_type: 'silver-chest', quantity: 2 });
    expect(first.meta).toEqual({ replayed: false, player_id: p.id });
    const again = ok(await grant({ chest_type: chestTypeId(game.appId, 'silver-chest'), quantity: 2, reference: `outage-${run}` }), 200);
    expect([again.meta.replayed, again.data.attributes.chests]).toEqual([true, first.data.attributes.chests]);
    expectError(await grant({ chest_type: 'silver-chest', quantity: 3, reference: `outage-${run}` }), 409, 'reference_reused');
    expectError(await grant({ chest_type: 'no-such-chest', reference: `other-${run}` }), 422, 'chest_type_not_found');
    expectError(await grant({ chest_type: 'silver-chest', reference: `other-${run}` }, other.secretKey), 404, 'player_not_found');
    await eventually(async () => {
      const mine = ok(await call(replicaA, 'GET', '/api/v1/players/me/chests', { token: p.token }));
      expect(mine.data.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining(first.data.attributes.chests));
    });
  });

  it('shows the whole player: declared profile and what the rules assume without it, purchases as purchases, mailbox, sessions', async () => {
    const p = await register(`whole-${run}@example.com`);
    const silver = (await catalogIds(stack, game.publishableKey))['Silver Chest']!;
    expect((await purchase(stack, { ...p, apiKey: game.publishableKey, starterChestId: '' }, silver, 'coins')).statusCode).toBe(201);
    const a = ok(await admin('GET', `/api/v1/admin/players/${p.id}`)).data.attributes;
    expect([a.country, a.birth_year, a.locked_at]).toEqual([null, null, null]);
    expect(a.purchases.total).toBe(1);
    expect(a.purchases.latest[0]).toMatchObject({ kind: 'purchase', chest_type_id: silver, quantity: 1, currency: 'coins', status: 'completed' });
    expect(a.mailbox).toEqual({ total: 0, items: [] });
    expect(a.sessions.active).toBe(1);
    // The demo content's CN pack holds a player of unknown age and country as under 8 in China for store payments.
    type Assumption = {
      missing: string[];
      effect: string;
      code?: string;
      under_age?: number;
      limit?: { period: string; limit: number; money?: string };
      rule?: { pack: string; rule: string };
    };
    const assumptions = a.profile_assumptions as Assumption[];
    expect(assumptions).toContainEqual(
      expect.objectContaining({
        missing: ['birth_year', 'country'],
        effect: 'spend_limit',
        under_age: 8,
        limit: { period: 'payment', limit: 0, money: 'CNY' },
        rule: expect.objectContaining({ pack: 'CN', rule: 'no_store_payments_under_8' }),
      }),
    );
    expect(assumptions).toContainEqual(expect.objectContaining({ missing: ['country'], effect: 'refused', code: 'blocked_in_region' }));
    expect(assumptions).toContainEqual(
      expect.objectContaining({ missing: ['birth_year'], effect: 'refused', code: 'age_restricted', under_age: 18 }),
    );
    // Declared (an adult in Germany): nothing is assumed any more.
    ok(await admin('PATCH', `/api/v1/admin/players/${p.id}`, { data: { type: 'player', attributes: { country: 'DE', birth_year: 1990 } } }));
    const declared = ok(await admin('GET', `/api/v1/admin/players/${p.id}`)).data.attributes;
    expect([declared.country, declared.birth_year, declared.profile_assumptions]).toEqual(['DE', 1990, []]);
  });

  it('records actions with their notes in the audit log, and no reads', async () => {
    const p = await register(`audit-${run}@example.com`);
    const reads = [
      await admin('GET', `/api/v1/admin/players/${p.id}`),
      await admin('GET', '/api/v1/admin/players'),
      await admin('GET', '/api/v1/admin/overview'),
      await admin('POST', '/api/v1/admin/players/search', { data: { type: 'player_search', attributes: { email_prefix: `audit-${run}` } } }),
    ];
    for (const r of reads) expect(r.statusCode, r.body).toBe(200);
    const credit = {
      data: { type: 'credit', attributes: { currency: 'gems', amount: '5', reference: `audit-${run}` } },
      meta: { note: 'Ticket 4: goodwill' },
    };
    ok(await admin('POST', `/api/v1/admin/players/${p.id}/credits`, credit), 201);
    ok(await admin('POST', `/api/v1/admin/players/${p.id}/lock`, { meta: { note: '  Ticket 4: chargeback  ' } }));
    ok(await admin('POST', `/api/v1/admin/players/${p.id}/unlock`));
    expectError(await admin('POST', `/api/v1/admin/players/${p.id}/lock`, { meta: { note: 'x'.repeat(501) } }), 422, 'invalid_field');
    await eventually(async () => {
      const entries = (await audit()).filter((e) => e.target === p.id);
      expect(entries.map((e) => [e.action, e.status, e.note])).toEqual([
        // A refused action is recorded too, its note cut at 500 characters.
        ['POST /api/v1/admin/players/{id}/lock', 422, 'x'.repeat(500)],
        ['POST /api/v1/admin/players/{id}/unlock', 200, null],
        ['POST /api/v1/admin/players/{id}/lock', 200, 'Ticket 4: chargeback'],
        ['POST /api/v1/admin/players/{id}/credits', 201, 'Ticket 4: goodwill'],
      ]);
    });
    const actions = (await audit()).map((e) => e.action);
    for (const read of [
      'GET /api/v1/admin/players/{id}',
      'GET /api/v1/admin/players',
      'GET /api/v1/admin/overview',
      'GET /api/v1/admin/audit',
      'POST /api/v1/admin/players/search',
    ])
      expect(actions).not.toContain(read);
  });
});

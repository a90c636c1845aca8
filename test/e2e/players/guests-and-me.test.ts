import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeJson, OpeningGranted, prefixed } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { balances, createGuest, loginBody, newEmail, refreshBody, register, registrationBody } from './support.js';

describe('guests and /players/me', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'wallet', 'chests'], env: { GRANT_WAIT_MS: '3000' } });
  });
  afterAll(async () => stack?.close());

  const me = (token: string, query = '') =>
    stack.inject({ method: 'GET', url: `/api/v1/players/me${query}`, headers: jsonApiHeaders(stack.apiKey, token) });
  const patchMe = (token: string, payload: unknown) =>
    stack.inject({ method: 'PATCH', url: '/api/v1/players/me', headers: jsonApiHeaders(stack.apiKey, token), payload: payload as object });

  it('creates a guest with 201, tokens, the initial currency and a starter chest, but no welcome bonus yet', async () => {
    const guest = await createGuest(stack);
    const starter = guest.body.meta.welcome_bonus!.starter_chest;
    expect(guest.body.data).toMatchObject({
      type: 'player',
      attributes: { email: null, is_anonymous: true },
      relationships: { chests: { data: [{ type: 'chest', id: starter }] } },
    });
    expect(guest.body.meta).toMatchObject({
      token_type: 'Bearer',
      player_type: 'anonymous',
      initial_currency: { coins: 1000, gems: 10 },
      welcome_bonus: { coins: 0, gems: 0, starter_chest: starter },
    });
    const b = await balances(stack, guest.accessToken);
    expect([Number(b.coins), Number(b.gems)]).toEqual([1000, 10]);
  });

  it('accepts an empty JSON:API body when creating a guest', async () => {
    const res = await stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: jsonApiHeaders(stack.apiKey) });
    expect(res.statusCode, res.body).toBe(201);
    expectJsonApi(JSON.parse(res.body));
  });

  const guestWithKey = (key: string) =>
    stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: { apikey: stack.apiKey, 'idempotency-key': key } });

  it('answers a guest creation retried with its Idempotency-Key like the first: same guest, grants once, new tokens', async () => {
    const key = `guest-${randomUUID()}`;
    const [a, b] = await Promise.all([guestWithKey(key), guestWithKey(key)]);
    expect([a.statusCode, b.statusCode], `${a.body} ${b.body}`).toEqual([201, 201]);
    expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].sort()).toEqual(['true', undefined]);
    const [first, second] = [JSON.parse(a.body), JSON.parse(b.body)];
    expectJsonApi(second);
    expect(second.data.id).toBe(first.data.id);
    expect(second.meta.welcome_bonus).toEqual(first.meta.welcome_bonus);
    expect(second.meta.refresh_token).not.toBe(first.meta.refresh_token);
    const later = await guestWithKey(key);
    expect([later.statusCode, JSON.parse(later.body).data.id, later.headers['idempotent-replayed']]).toEqual([201, first.data.id, 'true']);
    // The initial currency was granted once, whichever answer's token asks.
    const b1 = await balances(stack, second.meta.access_token);
    expect([Number(b1.coins), Number(b1.gems)]).toEqual([1000, 10]);
    // Another key makes another guest.
    const other = await guestWithKey(`guest-${randomUUID()}`);
    expect(JSON.parse(other.body).data.id).not.toBe(first.data.id);
  });

  it('stops answering a guest key once that guest has registered, with 409 idempotency_key_reused', async () => {
    const key = `guest-${randomUUID()}`;
    const guest = JSON.parse((await guestWithKey(key)).body);
    await register(stack, { token: guest.meta.access_token });
    expectError(await guestWithKey(key), 409, 'idempotency_key_reused');
  });

  it('upgrades a guest that registers with its token: same id and chest, welcome bonus once, initial currency not again', async () => {
    const guest = await createGuest(stack);
    const email = newEmail('upgraded');
    const upgraded = await register(stack, { email, token: guest.accessToken });
    expect(upgraded.id).toBe(guest.id);
    expect(upgraded.body.data.attributes).toEqual({ email, is_anonymous: false });
    expect(upgraded.body.meta.player_type).toBe('registered');
    expect(upgraded.body.meta.welcome_bonus).toEqual({ coins: 500, gems: 5, starter_chest: guest.body.meta.welcome_bonus!.starter_chest });
    const b = await balances(stack, upgraded.accessToken);
    expect([Number(b.coins), Number(b.gems)]).toEqual([1500, 15]);
    // The new credentials work, and the old guest token cannot register a second time.
    const login = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/login',
      headers: jsonApiHeaders(stack.apiKey),
      payload: loginBody(email),
    });
    const signedIn = JSON.parse(login.body);
    expectJsonApi(signedIn);
    expect(signedIn.data.id).toBe(guest.id);
    // The player's unopened chests, as the spec's player resource says: the guest's starter chest.
    expect(signedIn.data.relationships.chests).toEqual({ data: [{ type: 'chest', id: guest.body.meta.welcome_bonus!.starter_chest }] });
    const refreshed = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/refresh',
      headers: jsonApiHeaders(stack.apiKey),
      payload: refreshBody(signedIn.meta.refresh_token),
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(JSON.parse(refreshed.body).data.relationships.chests).toEqual(signedIn.data.relationships.chests);
    const again = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: jsonApiHeaders(stack.apiKey, guest.accessToken),
      payload: registrationBody(newEmail()),
    });
    expectError(again, 409, 'already_registered');
    expect([Number((await balances(stack, upgraded.accessToken)).coins)]).toEqual([1500]);
  });

  it('upgrades a guest only once when two registrations race', async () => {
    const guest = await createGuest(stack);
    const attempts = await Promise.all(
      [1, 2].map(() =>
        stack.inject({
          method: 'POST',
          url: '/api/v1/players/register',
          headers: jsonApiHeaders(stack.apiKey, guest.accessToken),
          payload: registrationBody(newEmail('race')),
        }),
      ),
    );
    expect(attempts.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    const winner = JSON.parse(attempts.find((r) => r.statusCode === 201)!.body);
    expect(Number((await balances(stack, winner.meta.access_token)).coins)).toBe(1500);
  });

  it('answers 409 when a registered player registers again with its token', async () => {
    const player = await register(stack);
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: jsonApiHeaders(stack.apiKey, player.accessToken),
      payload: registrationBody(newEmail()),
    });
    expectError(res, 409, 'already_registered');
  });

  it('answers GET /players/me with the player, its privacy, experience and creation time', async () => {
    const player = await register(stack);
    const starter = String(player.body.meta.welcome_bonus?.starter_chest);
    await eventually(async () => {
      const res = await me(player.accessToken);
      expect(res.statusCode, res.body).toBe(200);
      const body = JSON.parse(res.body);
      expectJsonApi(body);
      expect(body.data).toEqual({
        type: 'player',
        id: player.id,
        attributes: {
          email: player.email,
          is_anonymous: false,
          privacy: 'public',
          experience: 0,
          country: null,
          birth_year: null,
          created_at: player.body.meta.created_at,
        },
        relationships: { chests: { data: [{ type: 'chest', id: starter }] } },
        links: { self: expect.stringMatching(new RegExp(`^http://[^/]+/api/v1/players/${player.id}$`)) },
      });
    });
  });

  it('adds the experience of each chest opening to /players/me once, however often it is delivered', async () => {
    const player = await register(stack);
    const appId = JSON.parse(Buffer.from(player.accessToken.split('.')[1]!, 'base64url').toString()).app;
    const js = stack.nc.jetstream();
    const opening = (openingId: string, experience: number) =>
      encodeJson({
        openingId,
        appId,
        playerId: player.id,
        chestTypeId: 'wooden-chest',
        openedAt: new Date().toISOString(),
        experience,
        items: [{ slot: 0, collectibleId: 'ancient-clay-amulet', collectionId: 'ancient-relics', rarity: 'common' }],
      });
    const subject = prefixed(stack.env.NATS_PREFIX!, OpeningGranted.subject);
    const first = randomUUID();
    await js.publish(subject, opening(first, 25), { msgID: first });
    // The same opening re-published under another message id must not count twice.
    await js.publish(subject, opening(first, 25), { msgID: randomUUID() });
    const second = randomUUID();
    await js.publish(subject, opening(second, 10), { msgID: second });
    await eventually(async () => {
      expect(JSON.parse((await me(player.accessToken)).body).data.attributes.experience).toBe(35);
    });
  });

  it('lists the starter chest in /players/me, includes it with include=chests, and refuses other includes with 400', async () => {
    const guest = await createGuest(stack);
    const starter = String(guest.body.meta.welcome_bonus?.starter_chest);
    await eventually(async () => {
      const res = await me(guest.accessToken, '?include=chests&fields%5Bplayer%5D=is_anonymous,chests');
      expect(res.statusCode, res.body).toBe(200);
      const body = JSON.parse(res.body);
      expectJsonApi(body);
      expect(body.data.attributes).toEqual({ is_anonymous: true });
      expect(body.data.relationships.chests.data).toEqual([{ type: 'chest', id: starter }]);
      expect(body.included).toHaveLength(1);
      expect(body.included[0]).toMatchObject({ type: 'chest', id: starter, attributes: { name: 'Wooden Chest' } });
    });
    const plain = JSON.parse((await me(guest.accessToken)).body);
    expect(plain.data.relationships.chests.data).toEqual([{ type: 'chest', id: starter }]);
    expect(plain.included).toEqual([]);
    const [err] = expectError(await me(guest.accessToken, '?include=friends'), 400, 'unsupported_include');
    expect(err!.source).toEqual({ parameter: 'include' });
  });

  it('changes privacy with PATCH /players/me and answers 200 with the updated player', async () => {
    const player = await register(stack);
    for (const privacy of ['private', 'friends', 'public']) {
      const res = await patchMe(player.accessToken, { data: { type: 'player', id: player.id, attributes: { privacy } } });
      expect(res.statusCode, res.body).toBe(200);
      const body = JSON.parse(res.body);
      expectJsonApi(body);
      expect(body.data.attributes.privacy).toBe(privacy);
    }
    await patchMe(player.accessToken, { data: { type: 'player', attributes: { privacy: 'friends' } } });
    expect(JSON.parse((await me(player.accessToken)).body).data.attributes.privacy).toBe('friends');
  });

  it('answers 422 for an unknown privacy value or another attribute, 409 for another id', async () => {
    const player = await register(stack);
    const [bad] = expectError(await patchMe(player.accessToken, { data: { type: 'player', attributes: { privacy: 'everyone' } } }), 422);
    expect(bad!.source).toEqual({ pointer: '/data/attributes/privacy' });
    const [extra] = expectError(
      await patchMe(player.accessToken, { data: { type: 'player', attributes: { privacy: 'public', email: 'x@y.z' } } }),
      422,
    );
    expect(extra!.source?.pointer).toBe('/data/attributes');
    const other = await register(stack);
    expectError(
      await patchMe(player.accessToken, { data: { type: 'player', id: other.id, attributes: { privacy: 'private' } } }),
      409,
      'id_mismatch',
    );
    expect(JSON.parse((await me(other.accessToken)).body).data.attributes.privacy).toBe('public');
  });

  it('answers 401 on /players/me without a token, and 415 for a PATCH that is not JSON:API', async () => {
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: { apikey: stack.apiKey } }), 401, 'missing_token');
    const player = await register(stack);
    const res = await stack.inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: { ...jsonApiHeaders(stack.apiKey, player.accessToken), 'content-type': 'application/json' },
      payload: { data: { type: 'player', attributes: { privacy: 'private' } } },
    });
    expectError(res, 415, 'unsupported_media_type');
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InventoryAccess } from '@ccs/shared';
import { jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { createGuest, createOtherApp, register, type TestPlayer } from './support.js';

describe('friends and inventory privacy', () => {
  let stack: TestStack;
  let appId: string;
  beforeAll(async () => {
    // No wallet here: registration need not wait for its grants.
    stack = await startStack({ services: ['players'], env: { GRANT_WAIT_MS: '0' } });
    const anyone = await register(stack);
    appId = JSON.parse(Buffer.from(anyone.accessToken.split('.')[1]!, 'base64url').toString()).app;
  });
  afterAll(async () => stack?.close());

  const befriend = (from: TestPlayer, id: string, apiKey = stack.apiKey) =>
    stack.inject({
      method: 'POST',
      url: '/api/v1/players/me/friends',
      headers: jsonApiHeaders(apiKey, from.accessToken),
      payload: { data: { type: 'player', id } },
    });
  const friendsOf = async (p: TestPlayer) => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/players/me/friends', headers: jsonApiHeaders(stack.apiKey, p.accessToken) });
    expect(res.statusCode, res.body).toBe(200);
    const body = JSON.parse(res.body);
    expectJsonApi(body);
    return body.data.map((f: { id: string; meta: { status: string } }) => ({ id: f.id, status: f.meta.status }));
  };
  const unfriend = (from: TestPlayer, id: string) =>
    stack.inject({ method: 'DELETE', url: `/api/v1/players/me/friends/${id}`, headers: jsonApiHeaders(stack.apiKey, from.accessToken) });
  const setPrivacy = async (p: TestPlayer, privacy: string) => {
    const res = await stack.inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: jsonApiHeaders(stack.apiKey, p.accessToken),
      payload: { data: { type: 'player', attributes: { privacy } } },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const access = (owner: TestPlayer | string, viewer?: TestPlayer, app = appId) =>
    stack.bus.request(
      InventoryAccess,
      { ownerId: typeof owner === 'string' ? owner : owner.id },
      { requestId: randomUUID(), appId: app, playerId: viewer?.id },
    );

  it('sends a request (201 pending), confirms it by the reciprocal request, and lists it on both sides', async () => {
    const [a, b] = [await register(stack), await register(stack)];
    const sent = await befriend(a, b.id);
    expect(sent.statusCode, sent.body).toBe(201);
    const doc = JSON.parse(sent.body);
    expectJsonApi(doc);
    expect(doc.data).toMatchObject({ type: 'player', id: b.id, attributes: { is_anonymous: false }, meta: { status: 'pending_outgoing' } });
    expect(doc.data.attributes).not.toHaveProperty('email');
    expect(await friendsOf(a)).toEqual([{ id: b.id, status: 'pending_outgoing' }]);
    expect(await friendsOf(b)).toEqual([{ id: a.id, status: 'pending_incoming' }]);

    const confirmed = await befriend(b, a.id);
    expect(confirmed.statusCode).toBe(201);
    expect(JSON.parse(confirmed.body).data.meta.status).toBe('confirmed');
    expect(await friendsOf(a)).toEqual([{ id: b.id, status: 'confirmed' }]);
    expect(await friendsOf(b)).toEqual([{ id: a.id, status: 'confirmed' }]);
  });

  it('answers 200 when the same request is sent again', async () => {
    const [a, b] = [await register(stack), await register(stack)];
    expect((await befriend(a, b.id)).statusCode).toBe(201);
    const again = await befriend(a, b.id);
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body).data.meta.status).toBe('pending_outgoing');
  });

  it('removes a friendship with 204 on both sides; declining a request works the same way', async () => {
    const [a, b, c] = [await register(stack), await register(stack), await register(stack)];
    await befriend(a, b.id);
    await befriend(b, a.id);
    const res = await unfriend(b, a.id);
    expect(res.statusCode, res.body).toBe(204);
    expect(await friendsOf(a)).toEqual([]);
    expect(await friendsOf(b)).toEqual([]);
    await befriend(c, a.id);
    expect((await unfriend(a, c.id)).statusCode).toBe(204);
    expect(await friendsOf(c)).toEqual([]);
    expect((await unfriend(a, c.id)).statusCode).toBe(204);
  });

  it('answers 422 for a request to oneself and for a malformed id, 404 for an unknown player', async () => {
    const a = await register(stack);
    const [self] = expectError(await befriend(a, a.id), 422, 'cannot_befriend_self');
    expect(self!.source).toEqual({ pointer: '/data/id' });
    const [malformed] = expectError(await befriend(a, 'not-a-uuid'), 422);
    expect(malformed!.source).toEqual({ pointer: '/data/id' });
    expectError(await befriend(a, randomUUID()), 404, 'player_not_found');
    expectError(await unfriend(a, randomUUID()), 404, 'player_not_found');
    const [badPath] = expectError(await unfriend(a, 'nope'), 400, 'invalid_id');
    expect(badPath!.source).toEqual({ parameter: 'id' });
  });

  it('treats a player of another app as unknown', async () => {
    const other = await createOtherApp(stack, 'Friends isolation');
    const stranger = await register(stack, { apiKey: other.publishableKey });
    const a = await register(stack);
    expectError(await befriend(a, stranger.id), 404, 'player_not_found');
    expectError(await befriend(stranger, a.id, other.publishableKey), 404, 'player_not_found');
    expectError(await unfriend(a, stranger.id), 404, 'player_not_found');
    await expect(access(a, stranger, other.appId)).rejects.toMatchObject({ kind: 'not_found', code: 'player_not_found' });
  });

  it('answers 401 on every friends route without a token', async () => {
    const headers = { apikey: stack.apiKey, accept: 'application/vnd.api+json' };
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/players/me/friends', headers }), 401, 'missing_token');
    expectError(await stack.inject({ method: 'DELETE', url: `/api/v1/players/me/friends/${randomUUID()}`, headers }), 401, 'missing_token');
  });

  describe('inventory access decisions (players.v1.inventory_access)', () => {
    it('gives the owner full access whatever the privacy', async () => {
      const owner = await register(stack);
      await setPrivacy(owner, 'private');
      expect(await access(owner, owner)).toEqual({ access: 'full' });
    });

    it('shows a public profile as counts only to other registered players', async () => {
      const [owner, viewer] = [await register(stack), await register(stack)];
      expect(await access(owner, viewer)).toEqual({ access: 'counts' });
    });

    it('denies a private profile with profile_private, even to friends', async () => {
      const [owner, viewer] = [await register(stack), await register(stack)];
      await befriend(owner, viewer.id);
      await befriend(viewer, owner.id);
      await setPrivacy(owner, 'private');
      expect(await access(owner, viewer)).toEqual({ access: 'denied', code: 'profile_private' });
    });

    it('gives a friends-only profile in full to confirmed friends and denies others with friends_only', async () => {
      const [owner, friend, pending, stranger] = [await register(stack), await register(stack), await register(stack), await register(stack)];
      await setPrivacy(owner, 'friends');
      await befriend(owner, friend.id);
      await befriend(friend, owner.id);
      await befriend(pending, owner.id);
      expect(await access(owner, friend)).toEqual({ access: 'full' });
      expect(await access(owner, pending)).toEqual({ access: 'denied', code: 'friends_only' });
      expect(await access(owner, stranger)).toEqual({ access: 'denied', code: 'friends_only' });
    });

    it('never lets guests or anonymous callers see another inventory', async () => {
      const [owner, guest] = [await register(stack), await createGuest(stack)];
      expect(await access(owner, guest)).toEqual({ access: 'denied', code: 'guest_forbidden' });
      expect(await access(owner)).toEqual({ access: 'denied', code: 'guest_forbidden' });
      expect(await access(guest, guest)).toEqual({ access: 'full' });
    });

    it('answers 404 player_not_found for an unknown owner', async () => {
      const viewer = await register(stack);
      await expect(access(randomUUID(), viewer)).rejects.toMatchObject({ kind: 'not_found', code: 'player_not_found' });
    });
  });
});

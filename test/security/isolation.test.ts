import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startStack, type TestStack } from '../support/stack.js';
import { call, createOtherApp, expectError, inventoryIds, newPlayer, ok, snapshot, type Player } from './support/tenants.js';

// Tenant isolation (app A = the demo app, app B = a second app with its own content) and
// object-level authorization between players of one app, all through the gateway.

let stack: TestStack;
let B: { appId: string; key: string; secretKey: string };
let a1: Player, a2: Player, b1: Player;
// B's ids, which app A must not reach.
let bChestType: string, bCurrency: string, bCollection: string, bCollectible: string;

const purchaseBody = (extra: Record<string, unknown> = {}) => ({
  data: { type: 'purchase', attributes: { currency: 'coins', quantity: 1, ...extra } },
});
const friendBody = (id: string) => ({ data: { type: 'player', id } });

beforeAll(async () => {
  // 127.0.0.1:9 (discard, nothing listens): the webhook target below, exempt from the destination rules.
  stack = await startStack({ env: { WEBHOOK_ALLOW_TARGETS: '127.0.0.1:9' } });
  B = await createOtherApp(stack);
  [a1, a2, b1] = await Promise.all([newPlayer(stack, stack.apiKey), newPlayer(stack, stack.apiKey), newPlayer(stack, B.key)]);
  bChestType = ok(await call(stack, 'GET', '/api/v1/chests', b1)).data[0].id;
  bCurrency = ok(await call(stack, 'GET', '/api/v1/currencies', b1)).data.find((c: any) => c.attributes.code === 'coins').id;
  bCollection = ok(await call(stack, 'GET', '/api/v1/collections', b1)).data[0].id;
  bCollectible = ok(await call(stack, 'GET', '/api/v1/collectibles', b1)).data[0].id;
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe('apikey and token belong to one app', () => {
  it('refuses a token of one app with the key of another, whatever the route or key kind', async () => {
    const routes: [string, string][] = [
      ['GET', '/api/v1/players/me'],
      ['GET', '/api/v1/currencies'],
      ['GET', '/currencies'],
      ['GET', '/api/v1/players/me/chests'],
      ['GET', '/api/v1/players/me/openings'],
      ['GET', '/api/v1/players/me/collection'],
      ['GET', `/api/v1/chests/${b1.starterChest}/open`],
      ['GET', '/api/v1/chests'],
    ];
    for (const [method, url] of routes) {
      expectError(await call(stack, method as 'GET', url, { key: stack.apiKey, token: b1.token }), 401, 'invalid_token');
      expectError(await call(stack, method as 'GET', url, { key: B.key, token: a1.token }), 401, 'invalid_token');
      expectError(await call(stack, method as 'GET', url, { key: B.secretKey, token: a1.token }), 401, 'invalid_token');
    }
    // Registering in app A with a guest token of app B neither upgrades that guest nor creates a player.
    const bGuest = await newPlayer(stack, B.key, true);
    const payload = {
      data: { type: 'player', attributes: { email: 'x-guest@example.com', password: 'Str0ng!pass', password_confirmation: 'Str0ng!pass' } },
    };
    expectError(await call(stack, 'POST', '/api/v1/players/register', { key: stack.apiKey, token: bGuest.token }, { payload }), 401, 'invalid_token');
    expect(ok(await call(stack, 'GET', '/api/v1/players/me', bGuest)).data.attributes.is_anonymous).toBe(true);
    expect(await inventoryIds(stack, b1)).toContain(b1.starterChest);
  });

  it('resolves the apikey even when the /api prefix is percent-encoded (regression)', async () => {
    // The router decodes /%61pi/… to /api/…: the key, the token check and the rate limit must hold for it too.
    expectError(await stack.inject({ method: 'GET', url: '/%61pi/v1/chests' }), 401, 'missing_api_key');
    expectError(await stack.inject({ method: 'POST', url: '/%61pi/v1/players/anonymous' }), 401, 'missing_api_key');
    expectError(await call(stack, 'GET', '/%61pi/v1/players/me', { key: '', token: b1.token }), 401, 'missing_api_key');
    expectError(await call(stack, 'GET', '/%61pi/v1/players/me', { key: stack.apiKey, token: b1.token }), 401, 'invalid_token');
    expect(ok(await call(stack, 'GET', '/%61pi/v1/players/me', a1)).data.id).toBe(a1.id);
  });

  it('keeps credentials in their app: login, refresh and logout', async () => {
    const login = { data: { type: 'player', attributes: { email: b1.email, password: 'Str0ng!pass' } } };
    expectError(await call(stack, 'POST', '/api/v1/players/login', { key: stack.apiKey }, { payload: login }), 401, 'invalid_credentials');
    const refresh = (token: string) => ({ data: { type: 'session', attributes: { refresh_token: token } } });
    expectError(
      await call(stack, 'POST', '/api/v1/players/refresh', { key: stack.apiKey }, { payload: refresh(b1.refreshToken) }),
      401,
      'invalid_refresh_token',
    );
    // Logging out with someone else's refresh token ends only the caller's session.
    ok(await call(stack, 'POST', '/api/v1/players/logout', a1, { payload: refresh(b1.refreshToken) }), 204);
    ok(await call(stack, 'POST', '/api/v1/players/logout', a1, { payload: refresh(a2.refreshToken) }), 204);
    // b1's token was neither revoked nor counted as reused by the failed attempt in app A.
    const rotated = ok(await call(stack, 'POST', '/api/v1/players/refresh', { key: B.key }, { payload: refresh(b1.refreshToken) }));
    b1.refreshToken = rotated.meta.refresh_token;
    const a2r = ok(await call(stack, 'POST', '/api/v1/players/refresh', { key: stack.apiKey }, { payload: refresh(a2.refreshToken) }));
    a2.refreshToken = a2r.meta.refresh_token;
  });
});

describe("another app's resources are unknown (404)", () => {
  it('catalog, odds, collections and collectibles of app B are 404 with the key of app A', async () => {
    for (const who of [{ key: stack.apiKey }, a1]) {
      expectError(await call(stack, 'GET', `/api/v1/chests/${bChestType}`, who), 404, 'chest_not_found');
      expectError(await call(stack, 'GET', `/api/v1/chests/${bChestType}/odds`, who), 404, 'chest_not_found');
      expectError(await call(stack, 'GET', `/api/v1/collections/${bCollection}`, who), 404, 'collection_not_found');
      expectError(await call(stack, 'GET', `/api/v1/collections/${bCollection}/collectibles`, who), 404, 'collection_not_found');
      expectError(await call(stack, 'GET', `/api/v1/collectibles/${bCollectible}`, who), 404, 'collectible_not_found');
    }
    const ids = async (url: string) => ok(await call(stack, 'GET', url, a1)).data.map((r: { id: string }) => r.id);
    expect(await ids('/api/v1/chests?page[limit]=100')).not.toContain(bChestType);
    expect(await ids('/api/v1/collections?page[limit]=100')).not.toContain(bCollection);
    expect(await ids(`/api/v1/collectibles?page[limit]=100&filter[collection_id]=${bCollection}`)).toEqual([]);
    expect(await ids('/api/v1/currencies')).not.toContain(bCurrency);
  });

  it("cannot open, buy from, credit into or look at app B's objects, and nothing of B changes", async () => {
    const before = await snapshot(stack, b1);
    const a1Before = await snapshot(stack, a1);
    expectError(await call(stack, 'GET', `/api/v1/chests/${b1.starterChest}/open`, a1), 404, 'chest_not_found');
    expectError(
      await call(stack, 'POST', `/api/v1/chests/${b1.starterChest}/open`, a1, { headers: { 'idempotency-key': 'x-app' } }),
      404,
      'chest_not_found',
    );
    expectError(await call(stack, 'POST', `/api/v1/chests/${bChestType}/purchase`, a1, { payload: purchaseBody() }), 404, 'chest_not_found');
    expectError(
      await call(stack, 'POST', `/api/v1/currencies/${bCurrency}/credit`, a1, { payload: { amount: '5' }, json: true }),
      404,
      'currency_not_found',
    );
    expectError(
      await call(stack, 'POST', `/currencies/${bCurrency}/credit`, a1, { payload: { amount: '5' }, json: true }),
      404,
      'currency_not_found',
    );
    expectError(await call(stack, 'GET', `/api/v1/players/${b1.id}/chests`, a1), 404, 'player_not_found');
    expectError(await call(stack, 'POST', '/api/v1/players/me/friends', a1, { payload: friendBody(b1.id) }), 404, 'player_not_found');
    expectError(await call(stack, 'DELETE', `/api/v1/players/me/friends/${b1.id}`, a1), 404, 'player_not_found');
    // And the other way round: app B's player cannot reach app A's.
    expectError(await call(stack, 'GET', `/api/v1/players/${a1.id}/chests`, b1), 404, 'player_not_found');
    expectError(await call(stack, 'GET', `/api/v1/chests/${a1.starterChest}/open`, b1), 404, 'chest_not_found');
    expectError(await call(stack, 'POST', '/api/v1/players/me/friends', b1, { payload: friendBody(a1.id) }), 404, 'player_not_found');
    expect(await snapshot(stack, b1)).toEqual(before);
    expect(await snapshot(stack, a1)).toEqual(a1Before);
  });
});

describe('players of one app', () => {
  it("cannot open another player's chest; an Idempotency-Key never returns another player's opening", async () => {
    const bought = ok(
      await call(stack, 'POST', `/api/v1/chests/${ok(await call(stack, 'GET', '/api/v1/chests', a2)).data[0].id}/purchase`, a2, {
        payload: purchaseBody(),
      }),
      201,
    );
    const a2Opening = ok(await call(stack, 'POST', `/api/v1/chests/${bought.data[0].id}/open`, a2, { headers: { 'idempotency-key': 'shared-key' } }));
    const before = await snapshot(stack, a2);
    for (const method of ['GET', 'POST'] as const) {
      expectError(await call(stack, method, `/api/v1/chests/${a2.starterChest}/open`, a1), 403, 'chest_not_owned');
      // a2's key on a2's opened chest: no replay for a1 either.
      const replay = await call(stack, method, `/api/v1/chests/${bought.data[0].id}/open`, a1, { headers: { 'idempotency-key': 'shared-key' } });
      expectError(replay, 403, 'chest_not_owned');
      expect(replay.body).not.toContain(a2Opening.meta.opening_id);
    }
    const mine = await call(stack, 'GET', `/api/v1/chests/${a1.starterChest}/open`, a1, { headers: { 'idempotency-key': 'shared-key' } });
    const own = ok(mine);
    expect(mine.headers['idempotent-replayed']).toBeUndefined();
    expect(own.data.chest_id).toBe(a1.starterChest);
    expect(own.meta.opening_id).not.toBe(a2Opening.meta.opening_id);
    const a1Openings = ok(await call(stack, 'GET', '/api/v1/players/me/openings', a1)).data.map((o: { id: string }) => o.id);
    expect(a1Openings).toEqual([own.meta.opening_id]);
    expectError(await call(stack, 'GET', `/api/v1/players/${a2.id}/openings`, a1), 404);
    expect(await snapshot(stack, a2)).toEqual(before);
  });

  it('credit Idempotency-Keys are per player; purchases and profile changes only touch the caller', async () => {
    const coins = ok(await call(stack, 'GET', '/api/v1/currencies', a2)).data.find((c: any) => c.attributes.code === 'coins').id;
    const first = ok(
      await call(stack, 'POST', `/currencies/${coins}/credit`, a2, {
        payload: { amount: '10.00' },
        json: true,
        headers: { 'idempotency-key': 'credit-key' },
      }),
    );
    const before = await snapshot(stack, a2);
    const a1Coins = (await snapshot(stack, a1)).balances.coins;
    const res = await call(stack, 'POST', `/currencies/${coins}/credit`, a1, {
      payload: { amount: '10.00' },
      json: true,
      headers: { 'idempotency-key': 'credit-key' },
    });
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(ok(res).data.balance.amount).toBe((Number(a1Coins) + 10).toFixed(2));
    expect(ok(res).data.balance.amount).not.toBe(first.data.balance.amount);
    // Naming another player in a purchase or PATCH body changes nothing of theirs.
    const type = ok(await call(stack, 'GET', '/api/v1/chests', a1)).data[0].id;
    const body = { data: { ...purchaseBody({ player_id: a2.id }).data, relationships: { player: { data: { type: 'player', id: a2.id } } } } };
    const bought = ok(await call(stack, 'POST', `/api/v1/chests/${type}/purchase`, a1, { payload: body }), 201);
    expect(await inventoryIds(stack, a1)).toContain(bought.data[0].id);
    const patch = { data: { type: 'player', id: a2.id, attributes: { privacy: 'private' } } };
    expectError(await call(stack, 'PATCH', '/api/v1/players/me', a1, { payload: patch }), 409, 'id_mismatch');
    expect(await snapshot(stack, a2)).toEqual(before);
  });

  it('shows an inventory to others only as privacy and friendship allow', async () => {
    const [friend, pending, guest] = await Promise.all([
      newPlayer(stack, stack.apiKey),
      newPlayer(stack, stack.apiKey),
      newPlayer(stack, stack.apiKey, true),
    ]);
    for (const p of [friend, guest]) {
      ok(await call(stack, 'POST', '/api/v1/players/me/friends', p, { payload: friendBody(a2.id) }), 201);
      ok(await call(stack, 'POST', '/api/v1/players/me/friends', a2, { payload: friendBody(p.id) }), 201);
    }
    ok(await call(stack, 'POST', '/api/v1/players/me/friends', pending, { payload: friendBody(a2.id) }), 201);
    const url = `/api/v1/players/${a2.id}/chests`;
    const viewers = { stranger: a1, friend, pending, guest, nobody: { key: stack.apiKey } };
    const expected: Record<string, Record<keyof typeof viewers, 'counts' | 'full' | string>> = {
      public: { stranger: 'counts', friend: 'counts', pending: 'counts', guest: 'guest_forbidden', nobody: 'missing_token' },
      private: {
        stranger: 'profile_private',
        friend: 'profile_private',
        pending: 'profile_private',
        guest: 'guest_forbidden',
        nobody: 'missing_token',
      },
      friends: { stranger: 'friends_only', friend: 'full', pending: 'friends_only', guest: 'guest_forbidden', nobody: 'missing_token' },
    };
    const own = await inventoryIds(stack, a2);
    expect(own.length).toBeGreaterThan(0);
    for (const [privacy, row] of Object.entries(expected)) {
      ok(await call(stack, 'PATCH', '/api/v1/players/me', a2, { payload: { data: { type: 'player', attributes: { privacy } } } }));
      for (const [name, who] of Object.entries(viewers)) {
        const res = await call(stack, 'GET', url, who);
        const want = row[name as keyof typeof viewers];
        if (want === 'counts' || want === 'full') {
          const body = ok(res);
          expect(body.meta.total_chests, `${privacy}/${name}`).toBe(own.length);
          expect(
            body.data.map((c: { id: string }) => c.id),
            `${privacy}/${name}`,
          ).toEqual(want === 'full' ? own : []);
          expect('inventory_status' in body.meta, `${privacy}/${name}`).toBe(want === 'full');
        } else expectError(res, want === 'missing_token' ? 401 : 403, want);
      }
      expect(ok(await call(stack, 'GET', url, a2)).data.map((c: { id: string }) => c.id)).toEqual(own);
      expectError(await call(stack, 'GET', url, b1), 404, 'player_not_found');
    }
  });

  it('a token of a deleted player reaches nothing', async () => {
    const gone = await newPlayer(stack, stack.apiKey);
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query('DELETE FROM players.refresh_tokens WHERE player_id = $1', [gone.id]);
      await db.query('DELETE FROM players.players WHERE id = $1', [gone.id]);
    } finally {
      await db.end();
    }
    expectError(await call(stack, 'GET', '/api/v1/players/me', gone), 404, 'player_not_found');
    expectError(
      await call(stack, 'PATCH', '/api/v1/players/me', gone, { payload: { data: { type: 'player', attributes: { privacy: 'public' } } } }),
      404,
      'player_not_found',
    );
    const refresh = { data: { type: 'session', attributes: { refresh_token: gone.refreshToken } } };
    expectError(await call(stack, 'POST', '/api/v1/players/refresh', { key: stack.apiKey }, { payload: refresh }), 401, 'invalid_refresh_token');
    expectError(await call(stack, 'POST', '/api/v1/players/me/friends', gone, { payload: friendBody(a1.id) }), 404, 'player_not_found');
  });
});

describe('the admin API reaches its own app only', () => {
  const asStudio = (secretKey: string, url: string) =>
    stack.inject({ method: 'GET', url, headers: { apikey: secretKey, accept: 'application/vnd.api+json' } });

  it("finds its own players and never another app's, by id or by email", async () => {
    const mine = await asStudio(B.secretKey, `/api/v1/admin/players/${b1.id}`);
    expect(mine.statusCode, mine.body).toBe(200);
    const email: string = mine.json().data.attributes.email;
    // The demo app's players, asked with B's secret key; B's player asked by its email too.
    for (const id of [a1.id, a2.id]) expectError(await asStudio(B.secretKey, `/api/v1/admin/players/${id}`), 404, 'player_not_found');
    const third = await createOtherApp(stack);
    for (const id of [b1.id, encodeURIComponent(email)])
      expectError(await asStudio(third.secretKey, `/api/v1/admin/players/${id}`), 404, 'player_not_found');
  });

  it("counts its own app's players in the overview, and keeps its own audit log", async () => {
    const overview = ok(await asStudio(B.secretKey, '/api/v1/admin/overview'));
    expect(overview.data.id).toBe(B.appId);
    const other = await createOtherApp(stack);
    expect(ok(await asStudio(other.secretKey, '/api/v1/admin/overview')).data.attributes.players.total).toBe(0);
    const log = ok(await asStudio(other.secretKey, '/api/v1/admin/audit'));
    expect(log.data.every((e: { attributes: { actor: string } }) => e.attributes.actor.endsWith(other.secretKey.slice(-4)))).toBe(true);
  });

  it("refuses B's publishable key and B's player token", async () => {
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/admin/overview', headers: { apikey: B.key } }), 403, 'secret_key_required');
    const withToken = await stack.inject({
      method: 'GET',
      url: '/api/v1/admin/overview',
      headers: { apikey: B.secretKey, authorization: `Bearer ${b1.token}` },
    });
    expectError(withToken, 401, 'token_not_accepted');
  });
});

describe("webhooks reach their own app's endpoints and events only", () => {
  const as = (secretKey: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    stack.inject({
      method,
      url,
      headers: { apikey: secretKey, accept: 'application/vnd.api+json', ...(body ? { 'content-type': 'application/vnd.api+json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });

  it("never lists, changes, removes or retries another app's endpoint, and fans out only its own app's events", async () => {
    const created = ok(
      await as(B.secretKey, 'POST', '/api/v1/admin/webhooks', { data: { type: 'webhook_endpoint', attributes: { url: 'http://127.0.0.1:9/b' } } }),
      201,
    );
    const id: string = created.data.id;
    const third = await createOtherApp(stack);
    expect(ok(await as(third.secretKey, 'GET', '/api/v1/admin/webhooks')).data).toEqual([]);
    const patch = { data: { type: 'webhook_endpoint', attributes: { url: 'http://127.0.0.1:9/stolen' } } };
    expectError(await as(third.secretKey, 'PATCH', `/api/v1/admin/webhooks/${id}`, patch), 404, 'webhook_not_found');
    expectError(await as(third.secretKey, 'GET', `/api/v1/admin/webhooks/${id}/deliveries`), 404, 'webhook_not_found');
    expectError(await as(third.secretKey, 'DELETE', `/api/v1/admin/webhooks/${id}`), 404, 'webhook_not_found');
    const anyDelivery = '00000000-0000-4000-8000-000000000001';
    expectError(await as(third.secretKey, 'POST', `/api/v1/admin/webhooks/${id}/deliveries/${anyDelivery}/retry`), 404, 'webhook_delivery_not_found');
    expect(ok(await as(B.secretKey, 'GET', '/api/v1/admin/webhooks')).data[0].attributes.url).toBe('http://127.0.0.1:9/b');

    // An opening in app A gives B's endpoint nothing; one in app B gives it a delivery.
    const a = await newPlayer(stack, stack.apiKey);
    const b = await newPlayer(stack, B.key);
    for (const p of [a, b]) {
      const [chest] = await inventoryIds(stack, p);
      expect((await call(stack, 'POST', `/api/v1/chests/${chest}/open`, p)).statusCode).toBe(200);
    }
    const deadline = Date.now() + 15_000;
    let events: { event_type: string; player_id: string }[] = [];
    while (Date.now() < deadline) {
      events = ok(await as(B.secretKey, 'GET', `/api/v1/admin/webhooks/${id}/deliveries?page[limit]=100`)).data.map(
        (d: { attributes: { event_type: string; player_id: string } }) => d.attributes,
      );
      if (events.some((e) => e.event_type === 'chest.opened' && e.player_id === b.id)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(events.some((e) => e.event_type === 'chest.opened' && e.player_id === b.id)).toBe(true);
    expect(events.filter((e) => e.player_id === a.id)).toEqual([]);
  });
});

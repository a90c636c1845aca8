import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChestGrant, readContentFile, chestTypeId } from '@ccs/shared';
import { headers as natsHeaders } from 'nats';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import {
  appIdOf,
  createApp,
  createGuest,
  get,
  inventory,
  registerPlayer,
  waitForStarterChest,
  type Player,
} from '../../../services/chests/test/support/chests.js';

const content = readContentFile();
const wooden = content.chests.find((c) => c.id === 'wooden-chest')!;

// The inventory document through the gateway: its rendering, pages and links, the gateway's
// validation, and who may see it (players' privacy, friendships, guests, apps). Grants applied
// once and grants waiting for their app's content are chests' own
// (services/chests/test/inventory.test.ts, service tier).
describe('player chest inventory', () => {
  let stack: TestStack;
  let appId: string;
  let alice: Player;
  let bob: Player;

  beforeAll(async () => {
    stack = await startStack();
    appId = await appIdOf(stack);
    [alice, bob] = await Promise.all([registerPlayer(stack), registerPlayer(stack)]);
    await Promise.all([waitForStarterChest(stack, alice), waitForStarterChest(stack, bob)]);
  });
  afterAll(async () => stack?.close());

  const setPrivacy = async (p: Player, privacy: string) => {
    const res = await stack.inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: jsonApiHeaders(stack.apiKey, p.token),
      payload: { data: { type: 'player', attributes: { privacy } } },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const befriend = async (a: Player, b: Player) => {
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const res = await stack.inject({
        method: 'POST',
        url: '/api/v1/players/me/friends',
        headers: jsonApiHeaders(stack.apiKey, from.token),
        payload: { data: { type: 'player', id: to.id } },
      });
      expect(res.statusCode, res.body).toBeLessThan(300);
    }
  };
  const publishGrant = async (payload: Parameters<typeof ChestGrant.payload.parse>[0], msgId = randomUUID()) => {
    const js = stack.nc.jetstream();
    await js.publish(`${stack.env.NATS_PREFIX}.${ChestGrant.subject}`, JSON.stringify(ChestGrant.payload.parse(payload)), {
      msgID: msgId,
      headers: natsHeaders(),
    });
  };

  it("shows the starter chest with the spec's inventory meta, never cached", async () => {
    const res = await get(stack, '/api/v1/players/me/chests', alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-type']).toContain('application/vnd.api+json');
    const body = res.json();
    expectJsonApi(body);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toEqual({
      type: 'chest',
      id: alice.starterChestId,
      attributes: { name: wooden.name, description: wooden.description, images: wooden.images },
      relationships: {},
      meta: {
        source: 'welcome',
        chest_type_id: chestTypeId(appId, 'wooden-chest'),
        acquired_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    expect(body.included).toEqual([]);
    expect(body.meta).toEqual({
      player_id: alice.id,
      total_chests: 1,
      chest_types: { purchased: 0, earned: 0, welcome: 1, special: 0 },
      estimated_value: { coins: 500, gems: 0, vault_key: 0 },
      inventory_status: { capacity: 100, used: 1, available: 99 },
      page: { limit: 100, offset: 0, total: 1 },
    });
    expect(body.links.next).toBeNull();
    expect(body.links.self).toMatch(/\/api\/v1\/players\/me\/chests\?page%5Blimit%5D=100&page%5Boffset%5D=0$/);
  });

  it('answers the same for the own id as for me, and selects fields', async () => {
    const byId = await inventory(stack, alice, alice.id);
    const me = await inventory(stack, alice, 'me');
    expect({ data: byId.data, meta: byId.meta }).toEqual({ data: me.data, meta: me.meta });
    expect(byId.links.self).toContain(`/api/v1/players/${alice.id}/chests?`);
    const sparse = (await get(stack, '/api/v1/players/me/chests?fields[chest]=name', alice.token)).json();
    expect(sparse.data[0].attributes).toEqual({ name: wooden.name });
    expect(sparse.data[0].meta.source).toBe('welcome');
  });

  it('answers 400 to include, sort, page, filter, unknown fields and a malformed id; 401 to me without a token', async () => {
    expectError(await get(stack, '/api/v1/players/me/chests?include=chest_type', alice.token), 400, 'unsupported_include');
    expectError(await get(stack, '/api/v1/players/me/chests?sort=name', alice.token), 400, 'unsupported_sort');
    expectError(await get(stack, '/api/v1/players/me/chests?page[limit]=101', alice.token), 400);
    expectError(await get(stack, '/api/v1/players/me/chests?page[offset]=-1', alice.token), 400);
    expectError(await get(stack, '/api/v1/players/me/chests?filter[chest_type_id]=wooden', alice.token), 400, 'invalid_filter');
    expectError(await get(stack, '/api/v1/players/me/chests?filter[source]=welcome', alice.token), 400);
    expectError(await get(stack, '/api/v1/players/me/chests?fields[chest]=price', alice.token), 400, 'unsupported_fields');
    expectError(await get(stack, '/api/v1/players/12345/chests', alice.token), 400, 'invalid_id');
    expectError(await get(stack, '/api/v1/players/me/chests'), 401, 'missing_token');
  });

  it("shows a public profile's counts and types only, not its chests", async () => {
    const body = await inventory(stack, alice, bob.id);
    expect(body.data).toEqual([]);
    expect(body.included).toEqual([]);
    expect(body.meta).toEqual({ player_id: bob.id, total_chests: 1, chest_types: { purchased: 0, earned: 0, welcome: 1, special: 0 } });
  });

  it('denies a private profile with 403 profile_private', async () => {
    const carol = await registerPlayer(stack);
    await setPrivacy(carol, 'private');
    expectError(await get(stack, `/api/v1/players/${carol.id}/chests`, alice.token), 403, 'profile_private');
    expect((await inventory(stack, carol)).meta.player_id).toBe(carol.id);
  });

  it('shows a friends-only inventory to confirmed friends only', async () => {
    const dave = await registerPlayer(stack);
    const erin = await registerPlayer(stack);
    await setPrivacy(dave, 'friends');
    expectError(await get(stack, `/api/v1/players/${dave.id}/chests`, erin.token), 403, 'friends_only');
    await befriend(dave, erin);
    const body = await inventory(stack, erin, dave.id);
    expect(body.data.map((c: { id: string }) => c.id)).toEqual([dave.starterChestId]);
    expect(body.meta.inventory_status).toEqual({ capacity: 100, used: 1, available: 99 });
  });

  it("lets guests read their own inventory but never another's, nor anonymous callers", async () => {
    const guest = await createGuest(stack);
    expect((await inventory(stack, guest)).meta.total_chests).toBe(1);
    expectError(await get(stack, `/api/v1/players/${alice.id}/chests`, guest.token), 403, 'guest_forbidden');
    // No credentials at all: 401, not 403 (docs/design.md §3).
    expectError(await get(stack, `/api/v1/players/${alice.id}/chests`), 401, 'missing_token');
  });

  it("answers 404 for an unknown player and for another app's player", async () => {
    expectError(await get(stack, `/api/v1/players/${randomUUID()}/chests`, alice.token), 404, 'player_not_found');
    const other = await createApp(stack);
    const stranger = await registerPlayer(stack, other.publishableKey);
    expectError(await get(stack, `/api/v1/players/${stranger.id}/chests`, alice.token), 404, 'player_not_found');
    expectError(await get(stack, `/api/v1/players/${alice.id}/chests`, stranger.token, other.publishableKey), 404, 'player_not_found');
  });

  it('pages a large inventory by acquisition time, filters by chest type, and always counts the whole of it', async () => {
    const frank = await registerPlayer(stack);
    const golden = chestTypeId(appId, 'golden-chest');
    const granted: string[] = [];
    for (let i = 0; i < 11; i++) {
      const id = randomUUID();
      granted.push(id);
      await publishGrant({
        appId,
        playerId: frank.id,
        inventoryChestId: id,
        chestTypeId: i % 2 ? golden : chestTypeId(appId, 'wooden-chest'),
        source: 'earned',
      });
    }
    await eventually(async () => expect((await inventory(stack, frank)).meta.total_chests).toBe(12));
    const all = (await inventory(stack, frank)).data.map((c: { id: string }) => c.id);
    expect(all).toHaveLength(12);
    expect(all[0]).toBe(frank.starterChestId);

    const page = (await get(stack, '/api/v1/players/me/chests?page[limit]=5&page[offset]=5', frank.token)).json();
    expectJsonApi(page);
    expect(page.data.map((c: { id: string }) => c.id)).toEqual(all.slice(5, 10));
    expect(page.meta.total_chests).toBe(12);
    expect(page.meta.chest_types).toEqual({ purchased: 0, earned: 11, welcome: 1, special: 0 });
    expect(page.meta.estimated_value).toEqual({ coins: 500 * 7, gems: 50 * 5, vault_key: 0 });
    expect(page.meta.page).toEqual({ limit: 5, offset: 5, total: 12 });
    expect(page.links.prev).toContain('page%5Boffset%5D=0');
    expect(page.links.next).toContain('page%5Boffset%5D=10');
    expect(page.links.last).toContain('page%5Boffset%5D=10');

    const newest = (await get(stack, '/api/v1/players/me/chests?sort=-acquired_at&page[limit]=3', frank.token)).json();
    expect(newest.data.map((c: { id: string }) => c.id)).toEqual([...all].reverse().slice(0, 3));

    const goldens = (await get(stack, `/api/v1/players/me/chests?filter[chest_type_id]=${golden}`, frank.token)).json();
    expect(goldens.data).toHaveLength(5);
    expect(goldens.data.every((c: { meta: { chest_type_id: string } }) => c.meta.chest_type_id === golden)).toBe(true);
    expect(goldens.meta.page.total).toBe(5);
    expect(goldens.meta.total_chests).toBe(12);
    expect(goldens.links.self).toContain(`filter%5Bchest_type_id%5D=${golden}`);
  });

  it("values the inventory in the app's own currencies: every one of them, 0 where no chest is priced in it, and no other", async () => {
    // The default content with coins named gold and gems named shards (prices, grants, rules and all).
    const renamed = JSON.parse(JSON.stringify(content).replaceAll('"coins"', '"gold"').replaceAll('"gems"', '"shards"'));
    const other = await createApp(stack, renamed);
    const otherAppId = await appIdOf(stack, other.publishableKey);
    await eventually(
      async () => expect((await get(stack, '/api/v1/chests', undefined, other.publishableKey)).json().data).not.toHaveLength(0),
      20_000,
    );
    const grace = await registerPlayer(stack, other.publishableKey);
    expect((await inventory(stack, grace)).meta.estimated_value).toEqual({ gold: 500, shards: 0, vault_key: 0 });
    // A golden chest (50 shards) added: shards are valued too.
    await publishGrant({
      appId: otherAppId,
      playerId: grace.id,
      inventoryChestId: randomUUID(),
      chestTypeId: chestTypeId(otherAppId, 'golden-chest'),
      source: 'earned',
    });
    await eventually(async () => expect((await inventory(stack, grace)).meta.total_chests).toBe(2));
    expect((await inventory(stack, grace)).meta.estimated_value).toEqual({ gold: 500, shards: 50, vault_key: 0 });
  });
});

import { randomUUID } from 'node:crypto';
import Kitsu from 'kitsu';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack } from '../../support/stack.js';
import { TEST_PASSWORD } from '../../support/register.js';

/**
 * A generic JSON:API client, as a studio's web team would use one: Kitsu 11 (axios underneath)
 * against the gateway listening on a port, with Kitsu's own headers (Accept and Content-Type
 * application/vnd.api+json on every request) and its (de)serialisation. Kitsu flattens a
 * resource's attributes onto it, links its relationships to what is included, and keeps each
 * resource's `links`.
 *
 * The API's resource types are singular (`player`) and its collections plural (`/players`).
 * Kitsu builds a URL from the path it is given (pluralisation off, so `players/me/chests` stays as
 * written) and names a written resource's type after the last segment of that path; the app maps
 * those segments to the API's types.
 */
const TYPE_OF_SEGMENT: Record<string, string> = { players: 'player', register: 'player' };

/** A resource as Kitsu hands it back: attributes flattened, links kept. */
interface Flat {
  id: string;
  type: string;
  links?: { self: string };
  [attribute: string]: unknown;
}

describe('a generic JSON:API client (Kitsu 11) against the running gateway', () => {
  let stack: TestStack;
  let api: Kitsu;
  let playerId: string;

  beforeAll(async () => {
    stack = await startStack();
    const baseURL = `${await stack.app.listen({ port: 0, host: '127.0.0.1' })}/api/v1`;
    // The stack listens on loopback: no proxy from the environment.
    api = new Kitsu({ baseURL, pluralize: false, headers: { apikey: stack.apiKey }, axiosOptions: { proxy: false } });
    api.camel = (segment: string) => TYPE_OF_SEGMENT[segment] ?? segment;
    const email = `kitsu-${randomUUID()}@example.com`;
    const registered = await api.request({
      method: 'POST',
      url: 'players/register',
      type: 'register',
      body: { email, password: TEST_PASSWORD, password_confirmation: TEST_PASSWORD },
    });
    expect(registered.status).toBe(201);
    playerId = registered.data.id;
    api.headers.Authorization = `Bearer ${registered.meta.access_token}`;
  });
  afterAll(async () => stack?.close());

  it('reads the catalog, a collection with its collectibles included, the own inventory, currencies and banners', async () => {
    const catalog = await api.get('chests', { params: { sort: 'name', page: { limit: 20 } } });
    expect(catalog.status).toBe(200);
    const chests = catalog.data as Flat[];
    const wooden = chests.find((c) => c.name === 'Wooden Chest')!;
    expect(wooden.meta).toMatchObject({ price: { coins: expect.any(Number) } });
    expect(wooden.links!.self).toMatch(new RegExp(`/api/v1/chests/${wooden.id}$`));
    expect(catalog.links.self).toContain('/api/v1/chests?');
    expect(((await api.get(`chests/${wooden.id}`)).data as Flat).name).toBe('Wooden Chest');

    const collections = (await api.get('collections')).data as Flat[];
    const relics = (await api.get(`collections/${collections[0]!.id}`, { params: { include: 'collectibles' } })).data;
    // Kitsu links the relationship to the included collectibles: their attributes are there.
    const items = relics.collectibles.data as Flat[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((c) => typeof c.name === 'string' && typeof c.meta === 'object')).toBe(true);
    expect(items[0]!.links!.self).toMatch(new RegExp(`/api/v1/collectibles/${items[0]!.id}$`));
    const inCollection = await api.get(`collections/${relics.id}/collectibles`, { params: { include: 'collection', page: { limit: 5 } } });
    expect((inCollection.data as Flat[])[0]!.collection).toMatchObject({ data: { id: relics.id, name: relics.name } });

    const inventory = await api.get('players/me/chests');
    expect(inventory.meta.total_chests).toBe(1);
    const starter = (inventory.data as Flat[])[0]!;
    // An owned chest has no URL of its own: no self link.
    expect(starter.links).toBeUndefined();
    const meWithChests = (await api.get('players/me', { params: { include: 'chests' } })).data;
    expect((meWithChests.chests.data as Flat[]).map((c) => [c.id, c.name])).toEqual([[starter.id, starter.name]]);

    const currencies = (await api.get('currencies')).data as Flat[];
    const coins = currencies.find((c) => c.code === 'coins')!;
    expect(coins.balance).toEqual({ amount: expect.stringMatching(/^\d+\.\d{2}$/) });

    const banners = (await api.get('banners')).data as Flat[];
    expect(banners.length).toBeGreaterThan(0);
    const banner = (await api.get(`banners/${banners[0]!.id}`)).data;
    expect(banner.links.self).toMatch(new RegExp(`/api/v1/banners/${banners[0]!.id}$`));
    expect(banner.chest_type.data.id).toEqual(expect.any(String));
  });

  it('buys a chest, and updates the player at its canonical URL through patch()', async () => {
    const wooden = ((await api.get('chests', { params: { filter: { name: 'Wooden Chest' } } })).data as Flat[])[0]!;
    const before = (await api.get('players/me/chests')).meta.total_chests as number;
    const bought = await api.post(`chests/${wooden.id}/purchase`, { currency: 'coins' });
    expect(bought.status).toBe(201);
    expect((bought.data as Flat[]).map((c) => c.meta)).toEqual([expect.objectContaining({ chest_type_id: wooden.id, source: 'purchased' })]);
    expect((await api.get('players/me/chests')).meta.total_chests).toBe(before + 1);

    const me = (await api.get('players/me')).data as Flat;
    expect(me.links!.self).toMatch(new RegExp(`/api/v1/players/${playerId}$`));
    // patch() writes to players/{id}: the resource's own URL.
    const updated = await api.patch('players', { id: me.id, privacy: 'friends', country: 'DE' });
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({ id: playerId, privacy: 'friends', country: 'DE' });
    expect((await api.get(`players/${playerId}`)).data).toMatchObject({ id: playerId, privacy: 'friends', country: 'DE' });
  });

  it('hands back the JSON:API errors of a refusal', async () => {
    const err = (await api.get('chests/not-a-uuid').catch((e: unknown) => e)) as { response?: { status: number }; errors?: { code: string }[] };
    expect(err.response?.status).toBe(400);
    expect(err.errors?.map((e) => e.code)).toEqual(['invalid_id']);
    const other = (await api.patch('players', { id: randomUUID(), privacy: 'public' }).catch((e: unknown) => e)) as {
      response?: { status: number };
      errors?: { code: string }[];
    };
    expect([other.response?.status, other.errors?.[0]?.code]).toEqual([404, 'player_not_found']);
  });
});

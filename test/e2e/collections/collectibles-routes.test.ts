import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { get, registerPlayer, seedRelicsOwner, waitForContent, type TestPlayer } from './support.js';

const content = readContentFile();
const relics = content.collections.find((c) => c.id === 'ancient-relics')!;
const allCollectibles = content.collections.flatMap((c) => c.collectibles.map((i) => ({ ...i, collection_id: c.id })));

describe('collectibles and the player collection through the gateway', () => {
  let stack: TestStack;
  let player: TestPlayer;

  beforeAll(async () => {
    stack = await startStack();
    await waitForContent(stack);
    player = await seedRelicsOwner(stack);
  });
  afterAll(async () => stack?.close());

  describe('GET /api/v1/collectibles', () => {
    it('lists collectibles paginated, 20 by default, with links', async () => {
      const body = (await get(stack, '/api/v1/collectibles')).json();
      expectJsonApi(body);
      expect(body.data).toHaveLength(20);
      expect(body.meta).toEqual({ total_count: 60, page: { limit: 20, offset: 0 } });
      expect(body.data.map((c: { id: string }) => c.id)).toEqual(allCollectibles.slice(0, 20).map((c) => c.id));
      expect(body.links.next).toContain('page%5Boffset%5D=20');
      expect(body.links.last).toContain('page%5Boffset%5D=40');
      const last = (await get(stack, '/api/v1/collectibles?page[offset]=40&page[limit]=50')).json();
      expect(last.data).toHaveLength(20);
      expect(last.links.next).toBeNull();
    });

    it('filters by collection_id and by rarity, keeping the filter in the links', async () => {
      const byCollection = (await get(stack, '/api/v1/collectibles?filter[collection_id]=sea-creatures&page[limit]=100')).json();
      expectJsonApi(byCollection);
      expect(byCollection.meta.total_count).toBe(12);
      expect(byCollection.data.every((c: { attributes: { collection_id: string } }) => c.attributes.collection_id === 'sea-creatures')).toBe(true);
      expect(byCollection.links.self).toContain('filter%5Bcollection_id%5D=sea-creatures');

      const both = (await get(stack, '/api/v1/collectibles?filter[collection_id]=sea-creatures,sky-kingdom&filter[rarity]=legendary')).json();
      expectJsonApi(both);
      const expected = allCollectibles.filter((c) => ['sea-creatures', 'sky-kingdom'].includes(c.collection_id) && c.rarity === 'legendary');
      expect(both.meta.total_count).toBe(4);
      expect(both.data.map((c: { id: string }) => c.id)).toEqual(expected.map((c) => c.id));
      expect(both.data.every((c: { meta: { rarity: string } }) => c.meta.rarity === 'legendary')).toBe(true);

      const none = (await get(stack, '/api/v1/collectibles?filter[rarity]=mythic')).json();
      expectJsonApi(none);
      expect(none).toMatchObject({ data: [], meta: { total_count: 0 } });
    });

    it('accepts operators and logical filters', async () => {
      const body = (await get(stack, '/api/v1/collectibles?filter[not][rarity]=common&filter[collection_id][eq]=mecha-workshop')).json();
      expectJsonApi(body);
      expect(body.meta.total_count).toBe(6);
    });

    it('applies fields[collectible] and sorts', async () => {
      const body = (await get(stack, '/api/v1/collectibles?fields[collectible]=images&sort=-id&page[limit]=1')).json();
      expectJsonApi(body);
      const lastId = allCollectibles
        .map((c) => c.id)
        .sort()
        .at(-1)!;
      expect(body.data[0]).toMatchObject({
        id: lastId,
        attributes: { images: allCollectibles.find((c) => c.id === lastId)!.images },
        relationships: {},
      });
      expect(Object.keys(body.data[0].attributes)).toEqual(['images']);
    });

    it.each([
      ['filter[name]=x', 'filter[name]'],
      ['filter[rarity][gt]=x', 'filter[rarity][gt]'],
      ['include=collection', 'include'],
      ['sort=drop_rate', 'sort'],
      ['fields[collectible]=rarity', 'fields[collectible]'],
      ['page[offset]=-1', 'page[offset]'],
      ['sort=id,name,id,name,id,name', 'sort'],
      [`filter[rarity]=${Array.from({ length: 150 }, (_, i) => `r${i}`).join(',')}`, 'filter'],
    ])('answers 400 for %s', async (q, parameter) => {
      const errors = expectError(await get(stack, `/api/v1/collectibles?${q}`), 400);
      expect(errors[0]!.source).toEqual({ parameter });
    });
  });

  describe('GET /api/v1/collectibles/{id}', () => {
    it('shows rarity_info only to anonymous requests, never the player-specific meta', async () => {
      const res = await get(stack, '/api/v1/collectibles/ancient-golden-mask');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expectJsonApi(body);
      const mask = allCollectibles.find((c) => c.id === 'ancient-golden-mask')!;
      expect(body.data).toEqual({
        type: 'collectible',
        id: mask.id,
        attributes: { name: mask.name, description: mask.description, collection_id: 'ancient-relics', images: mask.images },
        relationships: { collection: { data: { type: 'collection', id: 'ancient-relics' } } },
        links: { self: expect.stringMatching(new RegExp(`^http://[^/]+/api/v1/collectibles/${mask.id}$`)) },
        meta: { rarity: mask.rarity },
      });
      const rarity = content.rarities.find((r) => r.id === mask.rarity)!;
      expect(body.meta).toEqual({ rarity_info: { level: mask.rarity, drop_rate: rarity.drop_rate } });
      expect(body.included).toBeUndefined();
    });

    it('gives an owner owned_by_player, the first acquired_at, the copies and the collection progress', async () => {
      const res = await get(stack, '/api/v1/collectibles/ancient-clay-amulet', player.token);
      const body = res.json();
      expectJsonApi(body);
      expect(body.meta).toEqual({
        rarity_info: { level: 'common', drop_rate: 0.75 },
        owned_by_player: true,
        acquired_at: '2024-03-01T10:00:00.000Z',
        owned_count: 2,
        copies_owned: 2,
        collection_progress: { current_item: 2, total_items: 12, completion_percentage: (100 * 2) / 12 },
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
    });

    it('tells an authenticated player who does not own it so, with null acquired_at', async () => {
      const body = (await get(stack, '/api/v1/collectibles/sea-kraken', player.token)).json();
      expectJsonApi(body);
      expect(body.meta).toEqual({
        rarity_info: { level: 'legendary', drop_rate: 0.05 },
        owned_by_player: false,
        acquired_at: null,
        owned_count: 0,
        copies_owned: 0,
        collection_progress: { current_item: 0, total_items: 12, completion_percentage: 0 },
      });
    });

    it('includes the collection with its relationships.collectibles', async () => {
      const body = (await get(stack, '/api/v1/collectibles/ancient-bronze-coin?include=collection', player.token)).json();
      expectJsonApi(body);
      expect(body.included).toHaveLength(1);
      expect(body.included[0]).toMatchObject({
        type: 'collection',
        id: 'ancient-relics',
        attributes: { name: relics.name, description: relics.description },
      });
      expect(body.included[0].relationships.collectibles.data).toEqual(relics.collectibles.map((i) => ({ type: 'collectible', id: i.id })));
      expect(body.meta.collection_progress.current_item).toBe(2);
    });

    it('applies fields[collectible] and fields[collection]', async () => {
      const body = (
        await get(
          stack,
          '/api/v1/collectibles/ancient-bronze-coin?include=collection&fields[collectible]=name,collection&fields[collection]=description',
        )
      ).json();
      expectJsonApi(body);
      expect(body.data.attributes).toEqual({ name: 'Bronze Coin' });
      expect(body.data.relationships).toEqual({ collection: { data: { type: 'collection', id: 'ancient-relics' } } });
      expect(body.included[0].attributes).toEqual({ description: relics.description });
      expect(body.included[0].relationships).toEqual({});
    });

    it('answers 404 for an unknown collectible and 400 for unsupported query members', async () => {
      expectError(await get(stack, '/api/v1/collectibles/no-such-thing'), 404, 'collectible_not_found');
      // Ids compare case-insensitively (slugs are lower case): upper case names the same collectible.
      const upper = await get(stack, '/api/v1/collectibles/ANCIENT-CLAY-AMULET', player.token);
      expect(upper.statusCode, upper.body).toBe(200);
      expect(upper.json().data.id).toBe('ancient-clay-amulet');
      expectError(await get(stack, '/api/v1/collectibles/ancient-clay-amulet?include=collectibles'), 400, 'unsupported_include');
      expectError(await get(stack, '/api/v1/collectibles/ancient-clay-amulet?fields[collection]=size'), 400, 'unsupported_fields');
      expectError(await get(stack, '/api/v1/collectibles/ancient-clay-amulet?filter[rarity]=rare'), 400, 'unsupported_filter');
    });
  });

  describe('GET /api/v1/players/me/collection', () => {
    it("lists the player's collectibles newest first with copies, and every collection's completeness", async () => {
      const res = await get(stack, '/api/v1/players/me/collection?include=collection', player.token);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expectJsonApi(body);
      expect(body.data.map((c: { id: string }) => c.id)).toEqual(['ancient-clay-amulet', 'ancient-bronze-coin']);
      expect(body.data[0].meta).toEqual({
        rarity: 'common',
        owned_count: 2,
        first_acquired_at: '2024-03-01T10:00:00.000Z',
        last_acquired_at: '2024-03-02T10:00:00.000Z',
      });
      expect(body.included.map((c: { id: string }) => c.id)).toEqual(['ancient-relics']);
      expect(body.meta).toMatchObject({ player_id: player.id, total_count: 2, total_copies: 3, page: { limit: 20, offset: 0 } });
      expect(body.meta.collections).toHaveLength(5);
      expect(body.meta.collections[0]).toEqual({
        id: 'ancient-relics',
        name: relics.name,
        total_items: 12,
        unique_items: 2,
        completion_rate: 0.1666,
        completed_at: null,
      });
    });

    it('is empty for a new player and 401 without a token', async () => {
      const fresh = await registerPlayer(stack);
      const body = (await get(stack, '/api/v1/players/me/collection', fresh.token)).json();
      expectJsonApi(body);
      expect(body.data).toEqual([]);
      expect(body.meta.total_count).toBe(0);
      expectError(await get(stack, '/api/v1/players/me/collection'), 401);
    });
  });
});

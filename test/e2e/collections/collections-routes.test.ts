import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { get, seedRelicsOwner, waitForContent, type TestPlayer } from './support.js';

const content = readContentFile();
const relics = content.collections.find((c) => c.id === 'ancient-relics')!;

describe('collections through the gateway', () => {
  let stack: TestStack;
  let player: TestPlayer;

  beforeAll(async () => {
    stack = await startStack();
    await waitForContent(stack);
    player = await seedRelicsOwner(stack);
  });
  afterAll(async () => stack?.close());

  describe('GET /api/v1/collections', () => {
    it('lists every collection of the app with total_count, page meta and links', async () => {
      const res = await get(stack, '/api/v1/collections');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('application/vnd.api+json');
      const body = res.json();
      expectJsonApi(body);
      expect(body.meta).toEqual({ total_count: 5, page: { limit: 20, offset: 0 } });
      expect(body.data.map((c: { id: string }) => c.id)).toEqual(content.collections.map((c) => c.id));
      const first = body.data[0];
      expect(first).toMatchObject({ type: 'collection', id: 'ancient-relics', attributes: { name: relics.name, description: relics.description } });
      expect(first.relationships.collectibles.data).toEqual(relics.collectibles.map((i) => ({ type: 'collectible', id: i.id })));
      expect(body.links.self).toMatch(/^http:\/\/.+\/api\/v1\/collections\?page%5Blimit%5D=20&page%5Boffset%5D=0$/);
      expect(body.links.next).toBeNull();
    });

    it('paginates with page[limit] and page[offset], with prev/next links', async () => {
      const res = await get(stack, '/api/v1/collections?page[limit]=2&page[offset]=2');
      const body = res.json();
      expectJsonApi(body);
      expect(body.data.map((c: { id: string }) => c.id)).toEqual(content.collections.slice(2, 4).map((c) => c.id));
      expect(body.meta).toEqual({ total_count: 5, page: { limit: 2, offset: 2 } });
      expect(body.links.prev).toContain('page%5Boffset%5D=0');
      expect(body.links.next).toContain('page%5Boffset%5D=4');
      expect(body.links.last).toContain('page%5Boffset%5D=4');
    });

    it('sorts by name descending', async () => {
      const body = (await get(stack, '/api/v1/collections?sort=-name')).json();
      expectJsonApi(body);
      const names = content.collections
        .map((c) => c.name)
        .sort()
        .reverse();
      expect(body.data.map((c: { attributes: { name: string } }) => c.attributes.name)).toEqual(names);
    });

    it('applies fields[collection]', async () => {
      const body = (await get(stack, '/api/v1/collections?fields[collection]=name')).json();
      expectJsonApi(body);
      expect(body.data[0].attributes).toEqual({ name: relics.name });
      expect(body.data[0].relationships).toEqual({});
    });

    it.each([
      ['include=collectibles', 'include', 'unsupported_include'],
      ['sort=rarity', 'sort', 'unsupported_sort'],
      ['fields[collection]=price', 'fields[collection]', 'unsupported_fields'],
      ['fields[chest]=name', 'fields[chest]', 'unsupported_fields'],
      ['page[limit]=0', 'page[limit]', 'invalid_page'],
      ['page[limit]=101', 'page[limit]', 'invalid_page'],
      ['filter[rarity]=rare', 'filter', 'unsupported_filter'],
      ['color=red', 'color', 'unknown_parameter'],
    ])('answers 400 for %s', async (q, parameter, code) => {
      const errors = expectError(await get(stack, `/api/v1/collections?${q}`), 400, code);
      expect(errors[0]!.source).toEqual({ parameter });
    });

    it('answers 401 without an apikey and with a bad token', async () => {
      expectError(await stack.inject({ method: 'GET', url: '/api/v1/collections' }), 401, 'missing_api_key');
      expectError(await get(stack, '/api/v1/collections', 'not.a.token'), 401);
    });
  });

  describe('GET /api/v1/collections/{id}', () => {
    it('shows a collection with collectible_count and a zero completeness for anonymous requests', async () => {
      const res = await get(stack, '/api/v1/collections/ancient-relics');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expectJsonApi(body);
      expect(body.data).toMatchObject({
        type: 'collection',
        id: 'ancient-relics',
        attributes: { name: relics.name, description: relics.description },
      });
      expect(body.data.relationships.collectibles.data).toHaveLength(12);
      expect(body.included).toBeUndefined();
      expect(body.meta).toEqual({ collectible_count: 12, collection_completeness: { total_items: 12, unique_items: 0, completion_rate: 0 } });
    });

    it("gives the authenticated player's completeness: distinct items owned, duplicates not double counted", async () => {
      const res = await get(stack, '/api/v1/collections/ancient-relics', player.token);
      const body = res.json();
      expectJsonApi(body);
      expect(body.meta.collection_completeness).toEqual({ total_items: 12, unique_items: 2, completion_rate: 0.1666, completed_at: null });
      expect(res.headers['cache-control']).toBe('private, no-store');
      const other = (await get(stack, '/api/v1/collections/sea-creatures', player.token)).json();
      expect(other.meta.collection_completeness).toEqual({ total_items: 12, unique_items: 0, completion_rate: 0, completed_at: null });
    });

    it('includes the full collectible objects with include=collectibles', async () => {
      const body = (await get(stack, '/api/v1/collections/ancient-relics?include=collectibles')).json();
      expectJsonApi(body);
      expect(body.included).toHaveLength(12);
      const amulet = relics.collectibles[0]!;
      expect(body.included[0]).toEqual({
        type: 'collectible',
        id: amulet.id,
        attributes: { name: amulet.name, description: amulet.description, collection_id: 'ancient-relics', images: amulet.images },
        relationships: { collection: { data: { type: 'collection', id: 'ancient-relics' } } },
        links: { self: expect.stringMatching(new RegExp(`^http://[^/]+/api/v1/collectibles/${amulet.id}$`)) },
        meta: { rarity: amulet.rarity },
      });
      const linked = body.data.relationships.collectibles.data.map((r: { id: string }) => r.id);
      expect(body.included.map((r: { id: string }) => r.id)).toEqual(linked);
    });

    it('applies fields[collection] and fields[collectible] together', async () => {
      const body = (
        await get(stack, '/api/v1/collections/ancient-relics?include=collectibles&fields[collection]=name,collectibles&fields[collectible]=name')
      ).json();
      expectJsonApi(body);
      expect(body.data.attributes).toEqual({ name: relics.name });
      expect(body.data.relationships.collectibles.data).toHaveLength(12);
      expect(body.included[0].attributes).toEqual({ name: relics.collectibles[0]!.name });
      expect(body.included[0].relationships).toEqual({});
    });

    it('answers 404 for an unknown collection and 400 for unsupported query members', async () => {
      expectError(await get(stack, '/api/v1/collections/no-such-collection'), 404, 'collection_not_found');
      expectError(await get(stack, '/api/v1/collections/Not%20A%20Slug'), 404, 'collection_not_found');
      expectError(await get(stack, `/api/v1/collections/${'x'.repeat(150)}`), 404, 'collection_not_found');
      expectError(await get(stack, `/api/v1/collections/${'x'.repeat(300)}`), 404, 'collection_not_found');
      expectError(await get(stack, `/api/v1/collections/${'x'.repeat(600)}`), 414, 'uri_too_long');
      expectError(await get(stack, '/api/v1/collections/%E0%A4%A'), 400);
      expectError(await get(stack, '/api/v1/collections/ancient-relics?include=collection'), 400, 'unsupported_include');
      expectError(await get(stack, '/api/v1/collections/ancient-relics?fields[collectible]=rarity'), 400, 'unsupported_fields');
      expectError(await get(stack, '/api/v1/collections/ancient-relics?sort=name'), 400, 'unsupported_sort');
      expectError(await get(stack, '/api/v1/collections/ancient-relics?page[limit]=5'), 400);
    });
  });

  describe('GET /api/v1/collections/{id}/collectibles', () => {
    it('lists the collectibles of the collection with total_collectibles and collection_info', async () => {
      const body = (await get(stack, '/api/v1/collections/ancient-relics/collectibles')).json();
      expectJsonApi(body);
      expect(body.data).toHaveLength(12);
      for (const c of body.data) {
        expect(c.type).toBe('collectible');
        expect(c.attributes.collection_id).toBe('ancient-relics');
        expect(c.relationships.collection.data).toEqual({ type: 'collection', id: 'ancient-relics' });
      }
      expect(body.included).toBeUndefined();
      expect(body.meta).toMatchObject({ total_collectibles: 12, collection_info: { id: 'ancient-relics', name: relics.name, completion_rate: 0 } });
    });

    it("carries the player's completion rate and includes the collection on request", async () => {
      const body = (await get(stack, '/api/v1/collections/ancient-relics/collectibles?include=collection', player.token)).json();
      expectJsonApi(body);
      expect(body.meta.collection_info.completion_rate).toBe(0.1666);
      expect(body.included).toHaveLength(1);
      expect(body.included[0]).toMatchObject({ type: 'collection', id: 'ancient-relics', attributes: { name: relics.name } });
      expect(body.included[0].relationships.collectibles.data).toHaveLength(12);
    });

    it('sorts by rarity rank then name, and applies fields[collectible]', async () => {
      const body = (
        await get(stack, '/api/v1/collections/ancient-relics/collectibles?sort=-rarity,name&fields[collectible]=name,collection_id')
      ).json();
      expectJsonApi(body);
      const rank = new Map(content.rarities.map((r) => [r.id, r.rank]));
      const expected = [...relics.collectibles]
        .sort((a, b) => rank.get(b.rarity)! - rank.get(a.rarity)! || a.name.localeCompare(b.name))
        .map((c) => c.name);
      expect(body.data.map((c: { attributes: { name: string } }) => c.attributes.name)).toEqual(expected);
      expect(body.data[0].attributes).toEqual({ name: expected[0], collection_id: 'ancient-relics' });
    });

    it('pages through a collection with page[limit] and page[offset]', async () => {
      const body = (await get(stack, '/api/v1/collections/ancient-relics/collectibles?page[limit]=5&page[offset]=10')).json();
      expectJsonApi(body);
      expect(body.data.map((c: { id: string }) => c.id)).toEqual(relics.collectibles.slice(10).map((c) => c.id));
      expect(body.meta).toMatchObject({ total_collectibles: 12, page: { limit: 5, offset: 10 } });
      expect(body.links.prev).toContain('page%5Boffset%5D=5');
      expect(body.links.next).toBeNull();
    });

    it('answers 404 for an unknown collection and 400 for an unsupported include', async () => {
      expectError(await get(stack, '/api/v1/collections/nope/collectibles'), 404, 'collection_not_found');
      expectError(await get(stack, '/api/v1/collections/ancient-relics/collectibles?include=collectibles'), 400, 'unsupported_include');
      expectError(await get(stack, '/api/v1/collections/ancient-relics/collectibles?sort=price'), 400, 'unsupported_sort');
    });
  });
});

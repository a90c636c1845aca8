import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import {
  AdminCreateApp,
  AdminLoadContent,
  AppContentLoaded,
  AppContentSchema,
  encodeJson,
  readContentFile,
  watchApplied,
  type AppContent,
} from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { appIdOf, collectionsDb, get, grantAndWait, openingGrant, registerPlayer, waitForContent, type TestPlayer } from './support.js';

const defaults = readContentFile();

/** A second app's content: one collection of its own, no collection of the demo app. */
const vaultContent: AppContent = AppContentSchema.parse({
  ...defaults,
  // The demo's banner and store products are on chests this app does not have.
  banners: [],
  store: undefined,
  players: { ...defaults.players, starter_chest_type: 'vault-chest' },
  collections: [
    {
      id: 'vault-treasures',
      name: 'Vault Treasures',
      description: 'Only in the second app.',
      collectibles: [
        { id: 'vault-coin', name: 'Vault Coin', description: 'A coin.', rarity: 'common' },
        { id: 'vault-gem', name: 'Vault Gem', description: 'A gem.', rarity: 'rare' },
        { id: 'vault-crown', name: 'Vault Crown', description: 'A crown.', rarity: 'legendary' },
      ],
    },
  ],
  chests: [
    {
      id: 'vault-chest',
      name: 'Vault Chest',
      description: 'Vault.',
      price: { coins: 100 },
      rules: { items: { fixed: 1 }, pools: [{ collection: 'vault-treasures' }] },
    },
  ],
});

/** The default content with ancient-relics renamed and its bronze coin replaced by a new item. */
function revisedContent(): AppContent {
  return AppContentSchema.parse({
    ...defaults,
    collections: defaults.collections.map((c) =>
      c.id !== 'ancient-relics'
        ? c
        : {
            ...c,
            name: 'Ancient Relics II',
            collectibles: [
              ...c.collectibles.filter((i) => i.id !== 'ancient-bronze-coin'),
              { id: 'ancient-silver-coin', name: 'Silver Coin', description: 'New in version 2.', images: [], rarity: 'rare' },
            ],
          },
    ),
  });
}

describe('content versions, caching and app isolation', () => {
  let stack: TestStack;
  let demoAppId: string;
  let vault: { appId: string; apiKey: string };
  let player: TestPlayer;
  let vaultPlayer: TestPlayer;
  let db: pg.Client;

  beforeAll(async () => {
    stack = await startStack();
    await waitForContent(stack);
    demoAppId = await appIdOf(stack);
    const created = await stack.bus.request(AdminCreateApp, { name: 'Vault game', content: vaultContent }, { requestId: randomUUID() });
    vault = { appId: created.appId, apiKey: created.publishableKey };
    await waitForContent(stack, vault.apiKey, 1);
    [player, vaultPlayer] = await Promise.all([registerPlayer(stack), registerPlayer(stack, vault.apiKey)]);
    db = await collectionsDb(stack);
  });
  afterAll(async () => {
    await db?.end();
    await stack?.close();
  });

  describe('app isolation', () => {
    it("shows each app only its own collections and collectibles; another app's ids are 404", async () => {
      const list = (await get(stack, '/api/v1/collections', undefined, vault.apiKey)).json();
      expectJsonApi(list);
      expect(list.data.map((c: { id: string }) => c.id)).toEqual(['vault-treasures']);
      expect((await get(stack, '/api/v1/collectibles', undefined, vault.apiKey)).json().meta.total_count).toBe(3);

      expectError(await get(stack, '/api/v1/collections/vault-treasures'), 404, 'collection_not_found');
      expectError(await get(stack, '/api/v1/collections/vault-treasures/collectibles', player.token), 404, 'collection_not_found');
      expectError(await get(stack, '/api/v1/collectibles/vault-coin', player.token), 404, 'collectible_not_found');
      expectError(await get(stack, '/api/v1/collections/ancient-relics', undefined, vault.apiKey), 404, 'collection_not_found');
      expectError(await get(stack, '/api/v1/collectibles/ancient-clay-amulet', vaultPlayer.token, vault.apiKey), 404, 'collectible_not_found');
      expect((await get(stack, '/api/v1/collectibles?filter[collection_id]=vault-treasures')).json().meta.total_count).toBe(0);
    });

    it("refuses one app's player token with another app's key", async () => {
      expectError(await get(stack, '/api/v1/collections', vaultPlayer.token), 401, 'invalid_token');
      expectError(await get(stack, '/api/v1/players/me/collection', player.token, vault.apiKey), 401, 'invalid_token');
    });

    it("never counts a grant of one app in another app's collection", async () => {
      // A grant in the vault app naming the demo player, and a demo grant for the vault player.
      await grantAndWait(
        stack,
        openingGrant(vault.appId, player.id, [{ collectibleId: 'ancient-clay-amulet', collectionId: 'ancient-relics' }]),
        openingGrant(demoAppId, vaultPlayer.id, [{ collectibleId: 'vault-coin', collectionId: 'vault-treasures' }]),
        openingGrant(vault.appId, vaultPlayer.id, [{ collectibleId: 'vault-gem', collectionId: 'vault-treasures' }]),
      );
      const amulet = (await get(stack, '/api/v1/collectibles/ancient-clay-amulet', player.token)).json();
      expect(amulet.meta).toMatchObject({ owned_by_player: false, owned_count: 0 });
      expect((await get(stack, '/api/v1/players/me/collection', player.token)).json().meta.total_count).toBe(0);

      const mine = (await get(stack, '/api/v1/players/me/collection', vaultPlayer.token, vault.apiKey)).json();
      expectJsonApi(mine);
      expect(mine.data.map((c: { id: string }) => c.id)).toEqual(['vault-gem']);
      expect(mine.meta.collections).toEqual([
        { id: 'vault-treasures', name: 'Vault Treasures', total_items: 3, unique_items: 1, completion_rate: 0.3333, completed_at: null },
      ]);
    });
  });

  describe('caching', () => {
    it('serves collection reads from Redis under the stack prefix, app and content version', async () => {
      await get(stack, '/api/v1/collections/sky-kingdom');
      await get(stack, '/api/v1/collectibles/sky-wind-chime');
      const keys = await stack.redis.keys(`${stack.env.REDIS_PREFIX}collections:${demoAppId}:*`);
      expect(keys).toEqual(
        expect.arrayContaining([
          `${stack.env.REDIS_PREFIX}collections:${demoAppId}:version`,
          `${stack.env.REDIS_PREFIX}collections:${demoAppId}:v1:collection:sky-kingdom`,
          `${stack.env.REDIS_PREFIX}collections:${demoAppId}:v1:collectible:sky-wind-chime`,
        ]),
      );
      // A change behind the cache's back is not seen: the answer comes from Redis.
      await db.query("UPDATE collections SET name = 'Changed behind the cache' WHERE app_id = $1 AND id = 'sky-kingdom'", [demoAppId]);
      const cached = (await get(stack, '/api/v1/collections/sky-kingdom')).json();
      expect(cached.data.attributes.name).toBe('Sky Kingdom');
      await db.query("UPDATE collections SET name = 'Sky Kingdom' WHERE app_id = $1 AND id = 'sky-kingdom'", [demoAppId]);
    });

    it('never caches what a player owns: a grant shows at once on a warm cache', async () => {
      const before = (await get(stack, '/api/v1/collections/sky-kingdom', player.token)).json();
      expect(before.meta.collection_completeness.unique_items).toBe(0);
      await grantAndWait(stack, openingGrant(demoAppId, player.id, [{ collectibleId: 'sky-wind-chime', collectionId: 'sky-kingdom' }]));
      const after = (await get(stack, '/api/v1/collections/sky-kingdom', player.token)).json();
      expect(after.meta.collection_completeness.unique_items).toBe(1);
      const item = (await get(stack, '/api/v1/collectibles/sky-wind-chime', player.token)).json();
      expect(item.meta).toMatchObject({ owned_by_player: true, owned_count: 1, collection_progress: { current_item: 1, total_items: 12 } });
    });
  });

  describe('a new content version', () => {
    it('replaces the content, invalidates the cache, and keeps what players own', async () => {
      await grantAndWait(
        stack,
        openingGrant(demoAppId, player.id, [
          { collectibleId: 'ancient-bronze-coin', collectionId: 'ancient-relics' },
          { collectibleId: 'ancient-clay-amulet', collectionId: 'ancient-relics' },
        ]),
      );
      const warm = (await get(stack, '/api/v1/collections/ancient-relics', player.token)).json();
      expect(warm.meta.collection_completeness.unique_items).toBe(2);

      const { version } = await stack.bus.request(AdminLoadContent, { appId: demoAppId, content: revisedContent() }, { requestId: randomUUID() });
      expect(version).toBe(2);
      const fresh = await eventually(async () => {
        const body = (await get(stack, '/api/v1/collections/ancient-relics', player.token)).json();
        expect(body.data.attributes.name).toBe('Ancient Relics II');
        return body;
      });
      expectJsonApi(fresh);
      const ids = fresh.data.relationships.collectibles.data.map((r: { id: string }) => r.id);
      expect(ids).toContain('ancient-silver-coin');
      expect(ids).not.toContain('ancient-bronze-coin');
      // The retired coin no longer counts towards the collection, the amulet still does.
      expect(fresh.meta.collection_completeness).toEqual({ total_items: 12, unique_items: 1, completion_rate: 0.0833, completed_at: null });
      expectError(await get(stack, '/api/v1/collectibles/ancient-bronze-coin', player.token), 404, 'collectible_not_found');
      expect((await get(stack, '/api/v1/collectibles/ancient-silver-coin')).json().meta.rarity_info).toEqual({ level: 'rare', drop_rate: 0.2 });
      const keys = await stack.redis.keys(`${stack.env.REDIS_PREFIX}collections:${demoAppId}:v2:*`);
      expect(keys.length).toBeGreaterThan(0);
      // Owned rows are never deleted.
      const owned = await db.query("SELECT 1 FROM owned_collectibles WHERE player_id = $1 AND collectible_id = 'ancient-bronze-coin'", [player.id]);
      expect(owned.rowCount).toBe(1);

      // Version 3 brings the coin back: the player owns it again, acquired when first granted.
      await stack.bus.request(AdminLoadContent, { appId: demoAppId, content: defaults }, { requestId: randomUUID() });
      await eventually(async () => {
        const coin = await get(stack, '/api/v1/collectibles/ancient-bronze-coin', player.token);
        expect(coin.statusCode).toBe(200);
        expect(coin.json().meta).toMatchObject({ owned_by_player: true, owned_count: 1, collection_progress: { current_item: 2, total_items: 12 } });
      });
    });

    it('ignores an older version that arrives late', async () => {
      const stale = { appId: demoAppId, version: 2, content: revisedContent() };
      const id = randomUUID();
      const watch = watchApplied(stack.nc, stack.env.NATS_PREFIX!, [id], 'collections-app-content');
      await stack.nc.jetstream().publish(`${stack.env.NATS_PREFIX}.${AppContentLoaded.subject}`, encodeJson(stale), { msgID: id });
      expect((await watch.done(10_000)).size).toBe(1);
      const body = (await get(stack, '/api/v1/collections/ancient-relics')).json();
      expect(body.data.attributes.name).toBe('Ancient Relics');
      expect(
        (await stack.inject({ method: 'GET', url: '/api/v1/collectibles/ancient-silver-coin', headers: jsonApiHeaders(stack.apiKey) })).statusCode,
      ).toBe(404);
    });
  });
});

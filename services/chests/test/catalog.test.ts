import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetChestOdds, GetChestType, GetInventory, ListChestTypes, readContentFile, type AppContent } from '@ccs/shared';
import { loadedApp, withoutOddsNotice } from '@ccs/shared/testing';
import { callOf, chestsApp, grantedChests, openChest, startChestsTier, type ChestsTier } from './support/chests-tier.js';

const content = readContentFile();

// The catalog's cache and content versions on the service tier: chests alone, called over its
// subjects, the content delivered as players' outbox does. The catalog documents, their filters,
// sorts, pages, fields and odds as rendered, and the gateway's validation are end to end:
// test/e2e/chests/catalog.test.ts.
describe('chest catalog (service tier)', () => {
  let tier: ChestsTier;
  let appId: string;
  let types: Record<string, string>;
  let redis: Redis;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    ({ appId, types } = await chestsApp(tier));
    redis = new Redis(tier.config.REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await tier?.close();
  });

  const list = (app = appId) =>
    tier.bus.request(ListChestTypes, { sort: [{ field: 'name', direction: 'asc' }], page: { limit: 20, offset: 0 } }, callOf(app));
  const names = (r: { chests: { name: string }[] }) => r.chests.map((c) => c.name);
  const notFound = { kind: 'not_found', errors: [{ code: 'chest_not_found' }] };

  it('caches catalog reads in Redis per app and content version', async () => {
    // The process keeps the version pointer for a second (LocalVersions); past it, it reads the
    // shared pointer in Redis again and puts it back there if it expired.
    await new Promise((r) => setTimeout(r, 1100));
    await list();
    await tier.bus.request(GetChestOdds, { chestTypeId: types['silver-chest']! }, callOf(appId));
    const prefix = tier.config.REDIS_PREFIX;
    const keys = await redis.keys(`${prefix}chests:${appId}:*`);
    expect(keys).toContain(`${prefix}chests:${appId}:version`);
    expect(keys.some((k) => k.includes(`:v1:odds:${types['silver-chest']}`))).toBe(true);
    expect(keys.some((k) => k.includes(':v1:list:'))).toBe(true);
  });

  it("keeps one app's catalog from another: other ids, and this app's ids are unknown there", async () => {
    const { appId: other, types: otherTypes } = await chestsApp(tier);
    const listed = await list(other);
    expect(listed.total).toBe(content.chests.length);
    expect(listed.chests.find((c) => c.slug === 'silver-chest')!.id).toBe(otherTypes['silver-chest']);
    expect(otherTypes['silver-chest']).not.toBe(types['silver-chest']);
    await expect(tier.bus.request(GetChestType, { chestTypeId: types['silver-chest']! }, callOf(other))).rejects.toMatchObject(notFound);
    await expect(tier.bus.request(GetChestOdds, { chestTypeId: types['silver-chest']! }, callOf(other))).rejects.toMatchObject(notFound);
    await expect(tier.bus.request(GetChestType, { chestTypeId: otherTypes['silver-chest']! }, callOf(appId))).rejects.toMatchObject(notFound);
  });

  it('replaces the catalog when a new content version loads, keeping ids and dropping the old cache', async () => {
    // Without the demo's KR pack: the new rules roll at once (the notice period is its own test).
    const next: AppContent = withoutOddsNotice(structuredClone(content));
    next.chests = next.chests.filter((c) => c.id !== 'abyssal-chest');
    // The demo's banner is on the chest type this version drops.
    next.banners = [];
    next.chests[1]!.name = 'Silver Chest Deluxe';
    next.chests[1]!.rules.rarity_weights = { common: 1, rare: 1, legendary: 1 };
    // A player owns a chest of the type the new version drops.
    const { playerId } = await grantedChests(tier, appId, { source: 'welcome' });
    const {
      chests: [abyssalChest],
    } = await grantedChests(tier, appId, { playerId, chestTypeId: 'abyssal-chest' });

    await loadedApp(tier, { appId, version: 2, content: next });
    await expect.poll(async () => names(await list()), { timeout: 20_000 }).toEqual(next.chests.map((c) => c.name).sort());
    expect((await list()).chests.find((c) => c.name === 'Silver Chest Deluxe')!.id).toBe(types['silver-chest']);
    await expect(tier.bus.request(GetChestType, { chestTypeId: types['abyssal-chest']! }, callOf(appId))).rejects.toMatchObject(notFound);
    const odds2 = await tier.bus.request(GetChestOdds, { chestTypeId: types['silver-chest']! }, callOf(appId));
    expect(odds2.rulesVersion).toBe(2);
    expect(odds2.rarities.map((r) => r.rarity)).toEqual(['common', 'rare', 'legendary']);
    expect(await redis.keys(`${tier.config.REDIS_PREFIX}chests:${appId}:v1:*`)).toEqual([]);

    // The dropped type's chest keeps its presentation and still opens, with its own rules.
    const inv = await tier.bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' }, callOf(appId, playerId));
    expect(inv.chests.find((c) => c.id === abyssalChest)!.name).toBe('Abyssal Chest');
    expect(inv.estimatedValue).toEqual({ coins: 500 + 1000, gems: 25, vault_key: 0 });
    const { items } = await openChest(tier, appId, playerId, abyssalChest!);
    expect(items.length).toBeGreaterThanOrEqual(2);
    for (const it of items) expect(['sea-creatures', 'ancient-relics']).toContain(it.collectionId);
    expect(items.some((it) => it.rarity !== 'common')).toBe(true);
  });
});

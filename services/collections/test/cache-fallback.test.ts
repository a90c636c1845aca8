import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCollectible, ListCollections } from '@ccs/shared';
import { asPlayer, startCollectionsTier, type CollectionsTier } from './support/collections-tier.js';

// Service tier: the collections service alone, its Redis unreachable; NATS and Postgres are real.
describe('collections without Redis', () => {
  let tier: CollectionsTier;
  let appId: string;

  beforeAll(async () => {
    ({ tier, appId } = await startCollectionsTier({ REDIS_URL: 'redis://127.0.0.1:1' }));
  });
  afterAll(async () => tier?.close());

  it('starts, and answers every read from Postgres while Redis is away', async () => {
    const started = Date.now();
    const list = await tier.bus.request(ListCollections, { page: { limit: 10, offset: 0 }, sort: [] }, asPlayer(appId));
    expect(list.total).toBe(5);
    const one = await tier.bus.request(GetCollectible, { collectibleId: 'sea-kraken', includeCollection: true }, asPlayer(appId));
    expect(one).toMatchObject({ collectible: { id: 'sea-kraken', rarity: 'legendary' }, rarityInfo: { level: 'legendary', dropRate: 0.05 } });
    expect(one.collection?.collectibleIds).toHaveLength(12);
    expect(one.ownership).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers 404 for another app asking for the same ids', async () => {
    await expect(
      tier.bus.request(GetCollectible, { collectibleId: 'sea-kraken', includeCollection: false }, asPlayer(randomUUID())),
    ).rejects.toMatchObject({ kind: 'not_found', code: 'collectible_not_found' });
  });
});

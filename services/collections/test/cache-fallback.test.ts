import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, GetCollectible, ListCollections } from '@ccs/shared';
import { asPlayer, startCollectionsTier, type CollectionsTier } from './support/collections-tier.js';

// Service tier: the collections service alone, its Redis unreachable; NATS and Postgres are real.
describe('collections without Redis', () => {
  let tier: CollectionsTier;
  let appId: string;
  /** The service's log lines (debug and up), parsed. */
  const lines: { msg: string; err?: string }[] = [];
  const sink = { write: (line: string) => void lines.push(JSON.parse(line)) };

  beforeAll(async () => {
    ({ tier, appId } = await startCollectionsTier({ REDIS_URL: 'redis://127.0.0.1:1' }, createLogger('collections', 'debug', sink)));
  });
  afterAll(async () => tier?.close());

  it('starts, and answers every read from Postgres while Redis is away', async () => {
    const before = lines.length;
    const list = await tier.bus.request(ListCollections, { page: { limit: 10, offset: 0 }, sort: [] }, asPlayer(appId));
    expect(list.total).toBe(5);
    const one = await tier.bus.request(GetCollectible, { collectibleId: 'sea-kraken', includeCollection: true }, asPlayer(appId));
    expect(one).toMatchObject({ collectible: { id: 'sea-kraken', rarity: 'legendary' }, rarityInfo: { level: 'legendary', dropRate: 0.05 } });
    expect(one.collection?.collectibleIds).toHaveLength(12);
    expect(one.ownership).toBeUndefined();
    // Each cache command was refused at once (no offline queue), not left to time out or to wait
    // for a connection: that is what sends a read to Postgres without waiting.
    const refused = lines.slice(before).filter((l) => l.msg === 'read cache unavailable; reading the database');
    expect(refused.length).toBeGreaterThan(0);
    for (const l of refused) expect(l.err).toMatch(/Stream isn't writeable and enableOfflineQueue options is false/);
  });

  it('answers 404 for another app asking for the same ids', async () => {
    await expect(
      tier.bus.request(GetCollectible, { collectibleId: 'sea-kraken', includeCollection: false }, asPlayer(randomUUID())),
    ).rejects.toMatchObject({ kind: 'not_found', code: 'collectible_not_found' });
  });
});

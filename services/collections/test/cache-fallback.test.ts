import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AppContentLoaded,
  Bus,
  encodeJson,
  GetCollectible,
  ListCollections,
  readContentFile,
  startService,
  watchApplied,
  type RunningService,
} from '@ccs/shared';
import { createTestDatabase, deleteTestStreams, isolatedConfig, testInfra } from '@ccs/shared/testing';
import { CollectionsConfigSchema, type CollectionsConfig } from '../src/config.js';
import { CONTENT_CONSUMER } from '../src/consumers/content-loaded.js';
import { collectionsService } from '../src/service.js';

// Medium tier: the collections service alone, its Redis unreachable; NATS and Postgres are real.
describe('collections without Redis', () => {
  let svc: RunningService<CollectionsConfig>;
  let drop: () => Promise<void>;
  let config: CollectionsConfig;
  const appId = randomUUID();

  beforeAll(async () => {
    const infra = await testInfra();
    const db = await createTestDatabase(infra);
    drop = db.drop;
    config = CollectionsConfigSchema.parse(isolatedConfig(infra, db.url, { REDIS_URL: 'redis://127.0.0.1:1' }));
    svc = await startService(collectionsService, config);
    const id = randomUUID();
    const watch = watchApplied(svc.deps.nc, config.NATS_PREFIX, [id], CONTENT_CONSUMER);
    await svc.deps.js.publish(`${config.NATS_PREFIX}.${AppContentLoaded.subject}`, encodeJson({ appId, version: 1, content: readContentFile() }), {
      msgID: id,
    });
    expect((await watch.done(10_000)).size).toBe(1);
  });
  afterAll(async () => {
    await svc?.stop();
    await deleteTestStreams(config.NATS_URL, config.NATS_PREFIX);
    await drop?.();
  });

  it('starts, and answers every read from Postgres while Redis is away', async () => {
    const bus = new Bus(svc.deps.nc, config.NATS_PREFIX, 3000);
    const started = Date.now();
    const list = await bus.request(ListCollections, { page: { limit: 10, offset: 0 }, sort: [] }, { requestId: randomUUID(), appId });
    expect(list.total).toBe(5);
    const one = await bus.request(GetCollectible, { collectibleId: 'sea-kraken', includeCollection: true }, { requestId: randomUUID(), appId });
    expect(one).toMatchObject({ collectible: { id: 'sea-kraken', rarity: 'legendary' }, rarityInfo: { level: 'legendary', dropRate: 0.05 } });
    expect(one.collection?.collectibleIds).toHaveLength(12);
    expect(one.ownership).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers 404 for another app asking for the same ids', async () => {
    const bus = new Bus(svc.deps.nc, config.NATS_PREFIX, 3000);
    await expect(
      bus.request(GetCollectible, { collectibleId: 'sea-kraken', includeCollection: false }, { requestId: randomUUID(), appId: randomUUID() }),
    ).rejects.toMatchObject({ status: 404, code: 'collectible_not_found' });
  });
});

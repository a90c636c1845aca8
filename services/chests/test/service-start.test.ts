import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bus, healthSubject, startService, type RunningService } from '@ccs/shared';
import { createTestDatabase, deleteTestStreams, isolatedConfig, testInfra } from '@ccs/shared/testing';
import { chestsService } from '../src/service.js';

describe('chests service runtime', () => {
  let svc: RunningService;
  let drop: () => Promise<void>;
  let prefix: string;
  let natsUrl: string;

  beforeAll(async () => {
    const infra = await testInfra();
    const db = await createTestDatabase(infra);
    drop = db.drop;
    const config = isolatedConfig(infra, db.url);
    prefix = config.NATS_PREFIX;
    natsUrl = config.NATS_URL;
    svc = await startService(chestsService, config);
  });

  afterAll(async () => {
    await svc?.stop();
    await deleteTestStreams(natsUrl, prefix);
    await drop?.();
  });

  it('answers its health subject over NATS in its own prefix', async () => {
    const bus = new Bus(svc.deps.nc, prefix, 2000);
    const reply = await bus.request(healthSubject('chests'), {}, { requestId: 'r1' });
    expect(reply).toEqual({ service: 'chests', ok: true });
  });

  it('answers 503 for a subject nobody serves', async () => {
    const bus = new Bus(svc.deps.nc, prefix, 2000);
    await expect(bus.request(healthSubject('nobody'), {}, { requestId: 'r2' })).rejects.toMatchObject({ kind: 'unavailable' });
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  consumer,
  createLogger,
  createPool,
  defineEvent,
  ensureGrantsStream,
  grantsStream,
  ServiceMetrics,
  startConsumer,
  type Pool,
} from '@ccs/shared';
import { deleteTestStreams, testInfra } from '@ccs/shared/testing';
import { streamName } from '../../packages/shared/src/runtime/subjects.js';
import { eventually } from '../support/stack.js';

const Ping = defineEvent('grants.test.ping', z.object({ n: z.number() }));

describe('a durable consumer while its database is away', () => {
  let nc: NatsConnection;
  let pool: Pool;
  const prefix = `outage${randomBytes(4).toString('hex')}`;
  let natsUrl: string;

  beforeAll(async () => {
    natsUrl = (await testInfra()).natsUrl;
    nc = await connect({ servers: natsUrl });
    // Nothing listens on port 1: every checkout fails as with a Postgres that is down.
    pool = createPool('postgres://postgres@127.0.0.1:1/postgres', 'public', 2);
    await ensureGrantsStream(await nc.jetstreamManager(), prefix);
  });
  afterAll(async () => {
    await pool?.end();
    await nc?.close();
    await deleteTestStreams(natsUrl, prefix);
  });

  it('never parks or acks a message it could not apply, however often it was delivered', async () => {
    let attempts = 0;
    const def = consumer({
      durable: 'outage-test',
      event: Ping,
      maxDeliver: 2,
      async applyBatch(tx) {
        attempts++;
        await tx.query('SELECT 1');
      },
    });
    const running = await startConsumer(def, {
      nc,
      js: nc.jetstream(),
      jsm: await nc.jetstreamManager(),
      pool,
      prefix,
      log: createLogger('test', 'silent'),
      metrics: new ServiceMetrics('test'),
    });
    try {
      const ack = await nc.jetstream().publish(`${prefix}.${Ping.subject}`, JSON.stringify({ n: 1 }), { msgID: randomUUID() });
      const jsm = await nc.jetstreamManager();
      // Delivered past maxDeliver (each try fails to get a connection), and still not acknowledged.
      await eventually(async () => {
        const info = await jsm.consumers.info(grantsStream(prefix), streamName(prefix, 'outage-test'));
        expect(info.delivered.consumer_seq).toBeGreaterThan(3);
        expect(info.ack_floor.stream_seq).toBeLessThan(ack.seq);
      }, 20_000);
      expect(attempts).toBe(0);
    } finally {
      await running.stop();
    }
  });
});

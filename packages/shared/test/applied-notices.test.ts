import { randomBytes, randomUUID } from 'node:crypto';
import { connect, headers as natsHeaders, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AppliedNotices,
  consumer,
  createLogger,
  createPool,
  defineEvent,
  ensureGrantsStream,
  NOTIFY_HEADER,
  ServiceMetrics,
  startConsumer,
  type Pool,
} from '../src/index.js';
import { deleteTestStreams, testInfra } from '../src/testing/index.js';

const Ping = defineEvent('grants.test.notice', z.object({ n: z.number() }));

/** A consumer's applied notice with what it decided (collections' duplicate conversions use it). */
describe('applied notices with a payload', () => {
  let nc: NatsConnection;
  let pool: Pool;
  const prefix = `notice${randomBytes(4).toString('hex')}`;
  let natsUrl: string;

  beforeAll(async () => {
    natsUrl = (await testInfra()).natsUrl;
    nc = await connect({ servers: natsUrl });
    // Never used: the batch below touches no database.
    pool = createPool('postgres://postgres@127.0.0.1:1/postgres', 'public', 1);
    await ensureGrantsStream(await nc.jetstreamManager(), prefix);
  });
  afterAll(async () => {
    await pool?.end();
    await nc?.close();
    await deleteTestStreams(natsUrl, prefix);
  });

  it('returns each applied message id with the notice its consumer left (undefined when none)', async () => {
    const def = consumer({
      durable: 'notice-test',
      event: Ping,
      processedId: (p) => String(p.n),
      async applyIdempotent(_db, batch) {
        for (const d of batch) if (d.payload.n > 0) d.notice = { doubled: d.payload.n * 2 };
        return new Set(batch.map((d) => String(d.payload.n)));
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
    const notices = new AppliedNotices(nc, prefix);
    try {
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      const waiting = notices.expect('notice-test', ids);
      for (const [n, id] of ids.entries()) {
        const h = natsHeaders();
        h.set(NOTIFY_HEADER, notices.subject);
        await nc.jetstream().publish(`${prefix}.${Ping.subject}`, JSON.stringify({ n }), { msgID: id, headers: h });
      }
      const seen = await waiting.done(10_000);
      expect(seen.size).toBe(3);
      expect([...seen.keys()].sort()).toEqual([...ids].sort());
      expect(seen.get(ids[0]!)).toBeUndefined();
      expect(seen.get(ids[1]!)).toEqual({ doubled: 2 });
      expect(seen.get(ids[2]!)).toEqual({ doubled: 4 });
    } finally {
      notices.close();
      await running.stop();
    }
  });
});

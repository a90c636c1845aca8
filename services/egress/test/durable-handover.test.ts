import { randomUUID } from 'node:crypto';
import { AckPolicy, connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, DURABLE, ensureGrantsStream, grantsStream, prefixed, streamName } from '@ccs/shared';
import { deleteTestStreams, testInfra } from '@ccs/shared/testing';
import { retiredDurablesSweeper, takeOverRetiredDurables } from '../src/consumers/durable-handover.js';

/**
 * Renamed durables (RETIRED_DURABLES: players-webhook-* → egress-webhook-*): the new one starts
 * right after the old one's ack floor, so nothing is skipped, and the old one is deleted only
 * once no replica pulls from it.
 */
describe('the handover of a renamed durable', () => {
  const prefix = `handover${randomUUID().slice(0, 8)}`;
  const stream = grantsStream(prefix);
  const old = streamName(prefix, 'players-webhook-openings');
  const now = streamName(prefix, DURABLE.webhookOpenings);
  const log = createLogger('egress', 'silent');
  let natsUrl: string;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    natsUrl = (await testInfra()).natsUrl;
    nc = await connect({ servers: natsUrl });
    jsm = await nc.jetstreamManager();
    await ensureGrantsStream(jsm, prefix);
    const js = nc.jetstream();
    for (let i = 1; i <= 6; i++) await js.publish(prefixed(prefix, 'grants.openings.granted'), new TextEncoder().encode(`{"n":${i}}`));
    // The old durable applied 1 and 2, and 4 (out of order); 3 is still in hand.
    await jsm.consumers.add(stream, {
      durable_name: old,
      filter_subject: prefixed(prefix, 'grants.openings.granted'),
      ack_policy: AckPolicy.Explicit,
    });
    const c = await js.consumers.get(stream, old);
    const got = [];
    for await (const m of await c.fetch({ max_messages: 4, expires: 2000 })) got.push(m);
    expect(got.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    for (const m of [got[0]!, got[1]!, got[3]!]) await m.ackAck();
  });
  afterAll(async () => {
    await nc?.close();
    await deleteTestStreams(natsUrl, prefix);
  });

  it('creates the new durable after the ack floor (3 comes again, 4 too, applied once by its key), once', async () => {
    await takeOverRetiredDurables(jsm, prefix, log);
    const info = await jsm.consumers.info(stream, now);
    expect(info.config.opt_start_seq).toBe(3);
    expect(info.config.filter_subject).toBe(prefixed(prefix, 'grants.openings.granted'));
    const c = await nc.jetstream().consumers.get(stream, now);
    const seqs = [];
    for await (const m of await c.fetch({ max_messages: 10, expires: 1000 })) {
      seqs.push(m.seq);
      m.ack();
    }
    expect(seqs).toEqual([3, 4, 5, 6]);
    // Again (another replica, a restart): the new durable is left as it is.
    await takeOverRetiredDurables(jsm, prefix, log);
    expect((await jsm.consumers.info(stream, now)).delivered.stream_seq).toBe(6);
  });

  it('deletes the old durable only after two passes in a row in which no replica pulls from it', async () => {
    const passes = async (n: number) => {
      const sweeper = retiredDurablesSweeper(jsm, prefix, log, 60_000);
      for (let i = 0; i < n; i++) {
        sweeper.start();
        await sweeper.stop();
      }
    };
    // A replica of the older version still pulls from it.
    const pulling = await (await nc.jetstream().consumers.get(stream, old)).consume({ expires: 5000 });
    void (async () => {
      for await (const m of pulling) m.ack();
    })();
    await new Promise((r) => setTimeout(r, 300));
    await passes(2);
    expect((await jsm.consumers.info(stream, old)).name).toBe(old);
    await pulling.close();
    await new Promise((r) => setTimeout(r, 5500));
    await passes(2);
    await expect(jsm.consumers.info(stream, old)).rejects.toThrow(/consumer not found/);
    expect((await jsm.consumers.info(stream, now)).name).toBe(now);
  }, 20_000);
});

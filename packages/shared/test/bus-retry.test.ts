import { randomBytes, randomUUID } from 'node:crypto';
import { connect, type Msg, type NatsConnection, type Subscription } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Bus, defineQuery, defineSubject, encodeJson, prefixed, type CallContext } from '../src/index.js';
import { testInfra } from '../src/testing/index.js';

// Lose a replica, not the call (bus.ts, request): against a real NATS server, a responder that
// swallows a message (as a replica killed while holding it does) or that is not there yet.

const Read = defineQuery('test.v1.retry_read', z.object({ n: z.number() }), z.object({ n: z.number() }), { callers: ['gateway'] });
/** A write that a repeated idempotencyKey applies once (as opening and credit declare). */
const Write = defineSubject(
  'test.v1.retry_write',
  z.object({ n: z.number(), idempotencyKey: z.string().optional(), retryKey: z.string().optional() }),
  z.object({ n: z.number() }),
  {
    callers: ['gateway'],
    keyedRetry: true,
  },
);

describe('Bus: calls that meet a dead or missing replica', () => {
  let nc: NatsConnection;
  let bus: Bus;
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const ctx: CallContext = { requestId: randomUUID() };
  const subs: Subscription[] = [];

  beforeAll(async () => {
    nc = await connect({ servers: (await testInfra()).natsUrl });
    bus = new Bus(nc, prefix, 600, { readTimeoutMs: 400 });
  });
  afterEach(() => {
    for (const s of subs.splice(0)) s.unsubscribe();
  });
  afterAll(async () => nc?.close());

  /** A replica that swallows the first `drop` messages it gets, then answers each; returns what it received. */
  async function replica(subject: string, drop: number) {
    const got: number[] = [];
    subs.push(
      nc.subscribe(prefixed(prefix, subject), {
        queue: 'replicas',
        callback: (_err, msg: Msg) => {
          got.push(got.length);
          if (got.length > drop) msg.respond(encodeJson({ n: 1 }));
        },
      }),
    );
    await nc.flush();
    return got;
  }

  it('sends a read that timed out once more, and answers', async () => {
    const got = await replica(Read.subject, 1);
    const started = Date.now();
    expect(await bus.request(Read, { n: 1 }, ctx)).toEqual({ n: 1 });
    expect(got).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('answers a write that timed out with 504 after one try, and sends it once more only when it carries its idempotencyKey', async () => {
    const got = await replica(Write.subject, 2);
    await expect(bus.request(Write, { n: 1 }, ctx)).rejects.toMatchObject({ kind: 'timeout', code: 'service_timeout' });
    expect(got).toHaveLength(1);
    expect(await bus.request(Write, { n: 1, idempotencyKey: 'k-1' }, ctx)).toEqual({ n: 1 });
    expect(got).toHaveLength(3);
  });

  it('tries a read twice at most: a replica that swallows both answers 504', async () => {
    const got = await replica(Read.subject, 5);
    await expect(bus.request(Read, { n: 1 }, ctx)).rejects.toMatchObject({ kind: 'timeout' });
    expect(got).toHaveLength(2);
  });

  it('waits through a gap without replicas (a restart) for up to a second, then answers 503 service_unavailable', async () => {
    setTimeout(() => void replica(Write.subject, 0), 300);
    expect(await bus.request(Write, { n: 2 }, ctx)).toEqual({ n: 1 });
    for (const s of subs.splice(0)) s.unsubscribe();
    await nc.flush();
    const started = Date.now();
    await expect(bus.request(Write, { n: 3 }, ctx)).rejects.toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
    // It kept trying for its window (a lower bound: a busy machine only makes it longer), then gave
    // up with service_unavailable; a hang would fail by the test's timeout.
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });

  it('answers 504, not 503, when the repeat of a timed-out keyed write finds no replica (the first try may have applied)', async () => {
    // The only replica takes the message and dies holding it: nobody is left for the repeat.
    const got: number[] = [];
    const sub = nc.subscribe(prefixed(prefix, Write.subject), {
      queue: 'replicas',
      callback: () => {
        got.push(1);
        sub.unsubscribe();
      },
    });
    await nc.flush();
    await expect(bus.request(Write, { n: 4, retryKey: randomUUID() }, ctx)).rejects.toMatchObject({ kind: 'timeout', code: 'service_timeout' });
    expect(got).toHaveLength(1);
  });
});

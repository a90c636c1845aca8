import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whileJetStreamSettles } from '../src/messaging/jetstream-settle.js';
import { testInfra } from '../src/testing/index.js';

// A replica started while a NATS cluster elects its JetStream meta leader (test/cluster, scenario 1)
// must wait for JetStream, not exit with "no JetStream". Against the real server: a set-up call that
// times out before it answers, one that never answers, and a closed connection.

describe('whileJetStreamSettles: JetStream set-up calls at a service start', () => {
  let nc: NatsConnection;
  const warned: string[] = [];
  const log = { warn: (_o: unknown, msg: string) => void warned.push(msg) };

  beforeAll(async () => {
    nc = await connect({ servers: (await testInfra()).natsUrl });
  });
  afterAll(async () => nc?.close());

  it('tries again until the call answers, saying what it waits for', async () => {
    const jsm = await nc.jetstreamManager();
    let calls = 0;
    const info = await whileJetStreamSettles(
      'the test account',
      async () => {
        // The first two calls meet what a leaderless cluster answers: a request that times out.
        if (++calls <= 2) await nc.request(`$JS.API.none.${randomBytes(4).toString('hex')}`, undefined, { timeout: 50, noMux: true });
        return jsm.getAccountInfo();
      },
      { nc, log, boundMs: 10_000 },
    );
    expect(calls).toBe(3);
    expect(info.streams).toBeGreaterThanOrEqual(0);
    expect(warned.filter((w) => w.startsWith('the test account: JetStream did not answer'))).toHaveLength(2);
  });

  it('gives up after its bound with the last error', async () => {
    const started = Date.now();
    await expect(
      whileJetStreamSettles('a stream that never answers', () => Promise.reject(new Error('TIMEOUT')), { nc, log, boundMs: 600 }),
    ).rejects.toThrow('TIMEOUT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
  });

  it('does not wait on a connection that is closed', async () => {
    const closed = await connect({ servers: (await testInfra()).natsUrl });
    await closed.close();
    const started = Date.now();
    await expect(whileJetStreamSettles('x', () => closed.jetstreamManager(), { nc: closed, log, boundMs: 10_000 })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

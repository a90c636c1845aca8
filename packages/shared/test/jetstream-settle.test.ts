import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

  it('tries again until its bound, then gives up with the last error', async () => {
    // A fake clock: the schedule of tries is the behaviour, whatever the machine's speed.
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    try {
      const began = Date.now();
      const triedAt: number[] = [];
      const settled = whileJetStreamSettles(
        'a stream that never answers',
        () => {
          triedAt.push(Date.now() - began);
          return Promise.reject(new Error('TIMEOUT'));
        },
        { nc, log, boundMs: 600 },
      ).catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await settled).toMatchObject({ message: 'TIMEOUT' });
      // Tried at once, after 0.25 s and after 0.5 s more; the third try is past the bound: no fourth.
      expect(triedAt).toEqual([0, 250, 750]);
      expect(warned.filter((w) => w.startsWith('a stream that never answers:'))).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not wait on a connection that is closed', async () => {
    const closed = await connect({ servers: (await testInfra()).natsUrl });
    await closed.close();
    let calls = 0;
    await expect(
      whileJetStreamSettles(
        'a closed connection',
        () => {
          calls++;
          return closed.jetstreamManager();
        },
        { nc: closed, log, boundMs: 10_000 },
      ),
    ).rejects.toThrow();
    // One try, no wait announced: the error came back at once.
    expect(calls).toBe(1);
    expect(warned.filter((w) => w.startsWith('a closed connection:'))).toEqual([]);
  });
});

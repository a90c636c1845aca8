import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Bus, defineEvent } from '../src/index.js';
import { testInfra } from '../src/testing/index.js';

// Bus.heardAll (bus.ts) against a real NATS server: a notice another process published and
// flushed before has been handled here when it resolves; callers in one turn share one PING.

const Notice = defineEvent('test.events.heard', z.object({ n: z.number() }));

describe('Bus.heardAll', () => {
  let publisher: NatsConnection;
  let listener: NatsConnection;
  let publishing: Bus;
  let listening: Bus;
  const prefix = `t${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    const { natsUrl } = await testInfra();
    [publisher, listener] = await Promise.all([connect({ servers: natsUrl }), connect({ servers: natsUrl })]);
    publishing = new Bus(publisher, prefix, 2_000);
    listening = new Bus(listener, prefix, 2_000);
  });
  afterAll(async () => {
    await publisher?.close();
    if (!listener?.isClosed()) await listener?.close();
  });

  it('resolves once every notice published and flushed elsewhere before the call has been handled', async () => {
    let heard = 0;
    const stop = listening.listen(Notice, () => heard++);
    try {
      await listener.flush();
      for (let round = 1; round <= 20; round++) {
        for (let i = 0; i < 50; i++) publishing.notify(Notice, { n: i });
        await publisher.flush();
        await listening.heardAll();
        expect(heard, `round ${round}`).toBe(round * 50);
      }
    } finally {
      stop();
    }
  });

  it('sends one PING for the callers of one turn, and a new one for a caller after it left', async () => {
    const flush = vi.spyOn(listener, 'flush');
    try {
      await Promise.all([listening.heardAll(), listening.heardAll(), listening.heardAll()]);
      expect(flush).toHaveBeenCalledTimes(1);
      const first = listening.heardAll();
      await new Promise((r) => setImmediate(r));
      const second = listening.heardAll();
      expect(second).not.toBe(first);
      await Promise.all([first, second]);
      expect(flush).toHaveBeenCalledTimes(3);
    } finally {
      flush.mockRestore();
    }
  });

  it('resolves on a closed connection too', async () => {
    await listener.close();
    await expect(listening.heardAll()).resolves.toBeUndefined();
  });
});

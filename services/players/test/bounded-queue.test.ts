import { describe, expect, it } from 'vitest';
import { BoundedQueue } from '../src/credentials/bounded-queue.js';

class Refused extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('refused');
  }
}

/** A piece of work that ends when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('BoundedQueue', () => {
  it('runs at most `concurrency` at once, then the waiters in arrival order', async () => {
    const q = new BoundedQueue({ concurrency: 2, depth: 10, maxWaitMs: 10_000 }, (s) => new Refused(s));
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      q.run(async () => {
        started.push(i);
        await g.opened;
        return i;
      }),
    );
    await settle();
    expect([started, q.load]).toEqual([[0, 1], { running: 2, waiting: 3 }]);
    gates[1]!.open();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(q.load).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses at once past the queue depth, without running the work, with a retry hint', async () => {
    const q = new BoundedQueue({ concurrency: 1, depth: 2, maxWaitMs: 10_000 }, (s) => new Refused(s));
    const g = gate();
    const accepted = [0, 1, 2].map(() => q.run(() => g.opened));
    let ran = false;
    const refused = await q
      .run(async () => {
        ran = true;
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Refused);
    expect((refused as Refused).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(ran).toBe(false);
    g.open();
    await Promise.all(accepted);
    // Room again once the queue drained.
    expect(await q.run(async () => 'ok')).toBe('ok');
  });

  it('refuses a waiter still waiting after maxWaitMs, and never runs its work', async () => {
    const q = new BoundedQueue({ concurrency: 1, depth: 5, maxWaitMs: 50 }, (s) => new Refused(s));
    const g = gate();
    const first = q.run(() => g.opened);
    let ran = false;
    const waited = q.run(async () => {
      ran = true;
    });
    await expect(waited).rejects.toBeInstanceOf(Refused);
    expect(q.load).toEqual({ running: 1, waiting: 0 });
    g.open();
    await first;
    expect(ran).toBe(false);
    expect(q.load).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot when the work fails', async () => {
    const q = new BoundedQueue({ concurrency: 1, depth: 0, maxWaitMs: 1000 }, (s) => new Refused(s));
    await expect(q.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await q.run(async () => 1)).toBe(1);
  });

  it('estimates the wait from the work ahead and the mean duration of recent work', async () => {
    const q = new BoundedQueue({ concurrency: 1, depth: 19, maxWaitMs: 60_000 }, (s) => new Refused(s));
    await q.run(() => new Promise((r) => setTimeout(r, 200)));
    const g = gate();
    const ahead = Array.from({ length: 20 }, () => q.run(() => g.opened));
    const refused = (await q.run(async () => undefined).catch((e: unknown) => e)) as Refused;
    // 20 ahead of the newcomer at about 200 ms each: about 4 s (timers may run a little late).
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(4);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(6);
    g.open();
    await Promise.all(ahead);
  });
});

import { describe, expect, it, vi } from 'vitest';
import { ReplyCache, stableJson } from '../src/lib/reply-cache.js';

// The reply cache's own rules, without infrastructure (reply-cache.test.ts runs it in the gateway).
const APP = '3f1c2a9e-8d4b-4b7e-9a61-0c5e2d7f4a10';
const OTHER = '7a2b4c6d-1e3f-4a5b-8c7d-9e0f1a2b3c4d';

/** A load whose answer the test gives when it wants, counting the calls. */
function deferredLoads() {
  const pending: { resolve(v: unknown): void; reject(e: unknown): void }[] = [];
  return {
    calls: () => pending.length,
    load: <T>() => new Promise<T>((resolve, reject) => void pending.push({ resolve: resolve as (v: unknown) => void, reject })),
    answer: (i: number, value: unknown) => pending[i]!.resolve(value),
    fail: (i: number, err: unknown) => pending[i]!.reject(err),
  };
}

const counting = () => {
  let n = 0;
  return { load: async () => ({ n: ++n }), calls: () => n };
};

describe('ReplyCache', () => {
  it('keeps a successful reply per app, subject and payload, whatever the order of its members', async () => {
    const cache = new ReplyCache({ ttlMs: 60_000 });
    const c = counting();
    expect(await cache.get(APP, 's', { a: 1, b: [1, 2] }, c.load)).toEqual({ n: 1 });
    expect(await cache.get(APP, 's', { b: [1, 2], a: 1, c: undefined }, c.load)).toEqual({ n: 1 });
    expect(await cache.get(APP, 's', { a: 1, b: [2, 1] }, c.load)).toEqual({ n: 2 });
    expect(await cache.get(APP, 'other', { a: 1, b: [1, 2] }, c.load)).toEqual({ n: 3 });
    expect(await cache.get(OTHER, 's', { a: 1, b: [1, 2] }, c.load)).toEqual({ n: 4 });
    expect(c.calls()).toBe(4);
  });

  it('lets concurrent misses share one request, and its failure, which is never kept', async () => {
    const cache = new ReplyCache({ ttlMs: 60_000 });
    const d = deferredLoads();
    const first = cache.get(APP, 's', {}, d.load);
    const second = cache.get(APP, 's', {}, d.load);
    expect(d.calls()).toBe(1);
    d.fail(0, new Error('unavailable'));
    await expect(first).rejects.toThrow('unavailable');
    await expect(second).rejects.toThrow('unavailable');
    const third = cache.get(APP, 's', {}, d.load);
    expect(d.calls()).toBe(2);
    d.answer(1, { ok: true });
    expect(await third).toEqual({ ok: true });
    expect(await cache.get(APP, 's', {}, d.load)).toEqual({ ok: true });
    expect(d.calls()).toBe(2);
  });

  it('drops the app’s replies on a content change, and never keeps one whose request started before it', async () => {
    const cache = new ReplyCache({ ttlMs: 60_000 });
    const c = counting();
    await cache.get(APP, 'kept', {}, c.load);
    await cache.get(OTHER, 'kept', {}, c.load);
    const d = deferredLoads();
    const before = cache.get(APP, 's', {}, d.load);
    cache.contentChanged(APP);
    // A miss after the notice does not join the request made before it.
    const after = cache.get(APP, 's', {}, d.load);
    expect(d.calls()).toBe(2);
    d.answer(0, { content: 'old' });
    expect(await before).toEqual({ content: 'old' });
    d.answer(1, { content: 'new' });
    expect(await after).toEqual({ content: 'new' });
    expect(await cache.get(APP, 's', {}, d.load)).toEqual({ content: 'new' });
    expect(d.calls()).toBe(2);
    // The app's other replies went; another app's stayed.
    expect(await cache.get(APP, 'kept', {}, c.load)).toEqual({ n: 3 });
    expect(await cache.get(OTHER, 'kept', {}, c.load)).toEqual({ n: 2 });
  });

  it('serves a reply until its request’s start plus the TTL', async () => {
    vi.useFakeTimers();
    try {
      const cache = new ReplyCache({ ttlMs: 80 });
      const c = counting();
      const slow = () => new Promise<{ n: number }>((r) => setTimeout(() => r(c.load()), 50));
      const first = cache.get(APP, 's', {}, slow);
      await vi.advanceTimersByTimeAsync(50);
      expect(await first).toEqual({ n: 1 });
      await vi.advanceTimersByTimeAsync(29);
      expect(await cache.get(APP, 's', {}, c.load)).toEqual({ n: 1 });
      await vi.advanceTimersByTimeAsync(1);
      expect(await cache.get(APP, 's', {}, c.load)).toEqual({ n: 2 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps at most maxEntries and maxBytes, the oldest out first', async () => {
    const cache = new ReplyCache({ ttlMs: 60_000, maxEntries: 3 });
    const c = counting();
    for (const p of [1, 2, 3, 4]) await cache.get(APP, 's', { p }, c.load);
    expect(cache.size).toBe(3);
    expect(await cache.get(APP, 's', { p: 4 }, c.load)).toEqual({ n: 4 });
    expect(await cache.get(APP, 's', { p: 1 }, c.load)).toEqual({ n: 5 });

    const small = new ReplyCache({ ttlMs: 60_000, maxBytes: 400 });
    const big = async () => ({ text: 'x'.repeat(100) });
    for (const p of [1, 2, 3, 4]) await small.get(APP, 's', { p }, big);
    expect(small.size).toBe(2);
    await small.get(APP, 's', { p: 0 }, async () => ({ text: 'x'.repeat(1000) }));
    expect(small.size).toBe(2);
  });

  it('freezes what it keeps, so no caller can change the next one’s answer', async () => {
    const cache = new ReplyCache({ ttlMs: 60_000 });
    const reply = await cache.get(APP, 's', {}, async () => ({ list: [{ name: 'a' }] }));
    expect(() => {
      reply.list[0]!.name = 'b';
    }).toThrow(TypeError);
  });

  it('asks every time when the TTL is 0', async () => {
    const cache = new ReplyCache({ ttlMs: 0 });
    const c = counting();
    await cache.get(APP, 's', {}, c.load);
    await cache.get(APP, 's', {}, c.load);
    expect(c.calls()).toBe(2);
    expect(cache.size).toBe(0);
  });
});

describe('stableJson', () => {
  it('orders members by name at every depth, leaves undefined members out and keeps array order', () => {
    expect(stableJson({ b: { d: 1, c: [3, { f: 1, e: 2 }] }, a: undefined, z: null })).toBe('{"b":{"c":[3,{"e":2,"f":1}],"d":1},"z":null}');
    expect(stableJson([undefined, 'x'])).toBe('[null,"x"]');
    expect(stableJson(Object.assign(Object.create(null), { y: 1, x: 2 }))).toBe('{"x":2,"y":1}');
  });
});

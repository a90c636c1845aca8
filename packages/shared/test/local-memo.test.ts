import { describe, expect, it, vi } from 'vitest';
import { LocalMemo, LocalVersions } from '../src/cache/local-memo.js';

describe('LocalMemo', () => {
  it('keeps at most its bound, dropping the least recently used first', () => {
    const memo = new LocalMemo(2);
    memo.set('a', 1);
    memo.set('b', 2);
    expect(memo.get('a')).toBe(1); // a is now the most recent
    memo.set('c', 3);
    expect([memo.get('a'), memo.get('b'), memo.get('c')]).toEqual([1, undefined, 3]);
  });

  it('freezes what it keeps, so no reader can change what the next one gets', () => {
    const memo = new LocalMemo();
    const value = memo.set('k', { list: [{ name: 'x' }] });
    expect(() => {
      'use strict';
      (value.list[0] as { name: string }).name = 'y';
    }).toThrow(TypeError);
    expect(memo.get<typeof value>('k')!.list[0]!.name).toBe('x');
  });

  it("forgets an app's keys by prefix", () => {
    const memo = new LocalMemo();
    memo.set('app1:v1:list', 1);
    memo.set('app2:v1:list', 2);
    memo.forget('app1:');
    expect([memo.get('app1:v1:list'), memo.get('app2:v1:list')]).toEqual([undefined, 2]);
  });
});

describe('LocalVersions', () => {
  it('holds a version for its time to live only', () => {
    vi.useFakeTimers();
    try {
      const versions = new LocalVersions(1000);
      versions.set('app', 3);
      expect(versions.get('app')).toBe(3);
      vi.advanceTimersByTime(1001);
      expect(versions.get('app')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { RestrictionsMemo } from '../src/lib/restrictions-memo.js';

// The gateway's memory of each player's purchase restrictions (the catalog's flags only).

describe('RestrictionsMemo', () => {
  afterEach(() => vi.useRealTimers());

  it("keeps a player's restrictions for the TTL, per app and player, then asks again", () => {
    vi.useFakeTimers();
    const memo = new RestrictionsMemo(5_000);
    memo.set('app-a', 'P-1', { gems: 'blocked_in_region' });
    expect(memo.get('app-a', 'p-1')).toEqual({ gems: 'blocked_in_region' });
    expect(memo.get('app-b', 'p-1')).toBeUndefined();
    expect(memo.get('app-a', 'p-2')).toBeUndefined();
    vi.advanceTimersByTime(4_999);
    expect(memo.get('app-a', 'p-1')).toEqual({ gems: 'blocked_in_region' });
    vi.advanceTimersByTime(2);
    expect(memo.get('app-a', 'p-1')).toBeUndefined();
  });

  it('forgets a player at once (a profile change on this replica), keeps nothing with a TTL of 0, and stays bounded', () => {
    const memo = new RestrictionsMemo(60_000, 2);
    memo.set('a', 'p1', {});
    memo.forget('a', 'p1');
    expect(memo.get('a', 'p1')).toBeUndefined();
    memo.set('a', 'p1', {});
    memo.set('a', 'p2', {});
    memo.set('a', 'p3', { gems: 'age_restricted' });
    expect(memo.get('a', 'p1')).toBeUndefined();
    expect(memo.get('a', 'p3')).toEqual({ gems: 'age_restricted' });
    const off = new RestrictionsMemo(0);
    off.set('a', 'p1', {});
    expect(off.get('a', 'p1')).toBeUndefined();
  });
});

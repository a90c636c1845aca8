import { afterEach, describe, expect, it, vi } from 'vitest';
import { RestrictionsMemo } from '../src/lib/restrictions-memo.js';

// The gateway's memory of each player's purchase restrictions (the catalog's flags only).

const answer = (refused: Record<string, string>, version = 1) => ({ refused, version });

describe('RestrictionsMemo', () => {
  afterEach(() => vi.useRealTimers());

  it("keeps a player's restrictions for the TTL from when they were asked, per app and player, then asks again", () => {
    vi.useFakeTimers();
    const memo = new RestrictionsMemo(5_000);
    const ticket = memo.ticket();
    vi.advanceTimersByTime(1_000);
    memo.set('app-a', 'P-1', answer({ gems: 'blocked_in_region' }), ticket);
    expect(memo.get('app-a', 'p-1')).toEqual({ gems: 'blocked_in_region' });
    expect(memo.get('app-b', 'p-1')).toBeUndefined();
    expect(memo.get('app-a', 'p-2')).toBeUndefined();
    vi.advanceTimersByTime(3_999);
    expect(memo.get('app-a', 'p-1')).toEqual({ gems: 'blocked_in_region' });
    vi.advanceTimersByTime(2);
    expect(memo.get('app-a', 'p-1')).toBeUndefined();
  });

  it('forgets a player at once, keeps nothing with a TTL of 0, and stays bounded', () => {
    const memo = new RestrictionsMemo(60_000, 2);
    memo.set('a', 'p1', answer({}), memo.ticket());
    memo.forget('a', 'P1');
    expect(memo.get('a', 'p1')).toBeUndefined();
    memo.set('a', 'p1', answer({}), memo.ticket());
    memo.set('a', 'p2', answer({}), memo.ticket());
    memo.set('a', 'p3', answer({ gems: 'age_restricted' }), memo.ticket());
    expect(memo.get('a', 'p1')).toBeUndefined();
    expect(memo.get('a', 'p3')).toEqual({ gems: 'age_restricted' });
    const off = new RestrictionsMemo(0);
    off.set('a', 'p1', answer({}), off.ticket());
    expect(off.enabled).toBe(false);
    expect(off.get('a', 'p1')).toBeUndefined();
  });

  it('does not keep an answer asked before a player was forgotten (it may be from the profile before the change)', () => {
    const memo = new RestrictionsMemo(60_000);
    const before = memo.ticket();
    memo.forget('a', 'p1');
    memo.set('a', 'p1', answer({ gems: 'blocked_in_region' }), before);
    expect(memo.get('a', 'p1')).toBeUndefined();
    memo.set('a', 'p1', answer({}), memo.ticket());
    expect(memo.get('a', 'p1')).toEqual({});
  });

  it("drops an app's answers judged by content older than the version chests announced, and keeps none arriving later", () => {
    const memo = new RestrictionsMemo(60_000);
    memo.set('a', 'p1', answer({}, 3), memo.ticket());
    memo.set('b', 'p1', answer({}, 3), memo.ticket());
    memo.contentChanged('a', 4);
    expect(memo.get('a', 'p1')).toBeUndefined();
    expect(memo.get('b', 'p1')).toEqual({});
    // An answer from a chests replica still on version 3 (or asked before the notice).
    memo.set('a', 'p2', answer({}, 3), memo.ticket());
    expect(memo.get('a', 'p2')).toBeUndefined();
    memo.set('a', 'p2', answer({ gems: 'blocked_in_region' }, 4), memo.ticket());
    expect(memo.get('a', 'p2')).toEqual({ gems: 'blocked_in_region' });
    // A late notice of an older version changes nothing.
    memo.contentChanged('a', 2);
    expect(memo.get('a', 'p2')).toEqual({ gems: 'blocked_in_region' });
  });
});

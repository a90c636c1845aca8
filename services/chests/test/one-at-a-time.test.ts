import { describe, expect, it } from 'vitest';
import { OneAtATime } from '../src/opening/one-at-a-time.js';

describe('OneAtATime', () => {
  it('runs one task at a time per key, in arrival order, other keys alongside, and forgets idle keys', async () => {
    const q = new OneAtATime();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task =
      (name: string, ms: number, fail = false) =>
      async () => {
        running += 1;
        most = Math.max(most, running);
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`end ${name}`);
        running -= 1;
        if (fail) throw new Error(name);
        return name;
      };
    const a = [q.run('p1', task('a1', 20)), q.run('p1', task('a2', 1, true)), q.run('p1', task('a3', 1))];
    const b = q.run('p2', task('b1', 5));
    expect(q.size).toBe(2);
    const settled = await Promise.allSettled([...a, b]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // p1's tasks never overlapped, and a failure did not stop the next one.
    const p1 = log.filter((l) => l.includes(' a'));
    expect(p1).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
    // p2 ran alongside p1.
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
    expect(most).toBe(2);
    await new Promise((r) => setTimeout(r, 0));
    expect(q.size).toBe(0);
  });
});

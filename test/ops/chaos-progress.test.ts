import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Progress } from '../../scripts/chaos/support/progress.js';

/**
 * The chaos run's watchdog (scripts/chaos/support/progress.ts): bounded by progress, not by the
 * clock. On vitest's fake clock, so a busy machine changes nothing here either.
 */
describe('chaos progress bound', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('lets work finish while it keeps progressing, however long it takes in all', async () => {
    const progress = new Progress();
    let finish!: (v: string) => void;
    const bounded = progress.bound(new Promise<string>((r) => (finish = r)), 1000);
    // Ten seconds in all, ten times the stall bound, with a step every 800 ms.
    for (let i = 0; i < 12; i++) {
      await vi.advanceTimersByTimeAsync(800);
      progress.mark(`step ${i}`);
    }
    finish('done');
    await expect(bounded).resolves.toBe('done');
  });

  it('fails work during which nothing progresses for the stall bound, naming the last progress', async () => {
    const progress = new Progress();
    const bounded = progress.bound(new Promise<string>(() => undefined), 1000);
    const failed = expect(bounded).rejects.toThrow(/^stalled: nothing progressed for \d+ s \(the last progress: the fault injected\)$/);
    await vi.advanceTimersByTimeAsync(600);
    progress.mark('the fault injected');
    await vi.advanceTimersByTimeAsync(1500);
    await failed;
  });
});

/** How much work a BoundedQueue takes on. */
export interface QueueLimits {
  /** Pieces of work running at once. */
  concurrency: number;
  /** Callers that may wait for a slot; the next one is refused at once. */
  depth: number;
  /** Longest wait for a slot; a caller still waiting then is refused, its work never started. */
  maxWaitMs: number;
}

interface Waiter {
  start(): void;
  timer: NodeJS.Timeout;
}

/**
 * A concurrency limiter whose queue is bounded in length and in waiting time, FIFO. Past either
 * bound the caller gets `refuse(seconds)` (thrown, work not started), where `seconds` estimates
 * when the work ahead of it will be done: everything running and waiting, over the concurrency,
 * times the mean time of recent work. npm's limiters (p-limit, p-queue, fastq, async-sema) queue
 * without a bound; bottleneck bounds it but is unmaintained since 2019, so this is ours.
 */
export class BoundedQueue {
  private running = 0;
  /** Insertion-ordered: the oldest waiter is first. */
  private readonly waiting = new Set<Waiter>();
  /** Moving mean of how long one piece of work took (ms); 0 until the first one ends. */
  private meanMs = 0;

  constructor(
    private readonly limits: QueueLimits,
    private readonly refuse: (retryAfterSeconds: number) => Error,
  ) {
    if (!(limits.concurrency >= 1 && limits.depth >= 0 && limits.maxWaitMs >= 0)) throw new RangeError('BoundedQueue: bad limits');
  }

  /** Running and waiting now (for logs and tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.size };
  }

  /** Runs `work` in a slot, after those waiting before it; throws `refuse(…)` past the bounds, without running it. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.limits.concurrency) this.running++;
    else await this.slot();
    const started = performance.now();
    try {
      return await work();
    } finally {
      const ms = performance.now() - started;
      this.meanMs = this.meanMs === 0 ? ms : this.meanMs * 0.8 + ms * 0.2;
      this.release();
    }
  }

  private slot(): Promise<void> {
    if (this.waiting.size >= this.limits.depth) return Promise.reject(this.refuse(this.retryAfterSeconds()));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.delete(waiter);
          reject(this.refuse(this.retryAfterSeconds()));
        }, this.limits.maxWaitMs),
      };
      this.waiting.add(waiter);
    });
  }

  /** Hands the slot straight to the oldest waiter (`running` unchanged), or frees it. */
  private release(): void {
    const next = this.waiting.values().next();
    if (next.done) {
      this.running--;
      return;
    }
    this.waiting.delete(next.value);
    next.value.start();
  }

  private retryAfterSeconds(): number {
    const ahead = this.running + this.waiting.size;
    const seconds = Math.ceil(((ahead / this.limits.concurrency) * (this.meanMs || 100)) / 1000);
    return Math.min(60, Math.max(1, seconds));
  }
}

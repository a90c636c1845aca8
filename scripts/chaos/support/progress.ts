/**
 * The chaos run's watchdog. A scenario is bounded by progress, not by the clock: every answer the
 * run's client receives and every step it logs counts as progress, and a scenario fails as
 * stalled only when nothing progressed for `stallMs`. A busy machine makes a scenario slower,
 * never a failure; a hung one (a request, a restart or a query that never returns) still ends.
 */
export class Progress {
  private at = Date.now();
  private what = 'the start';

  /** Records that something happened now. */
  mark(what: string): void {
    this.at = Date.now();
    this.what = what;
  }

  /**
   * Runs `work`, failing it with "stalled: …" when nothing progressed for `stallMs` while it ran
   * (`work` itself goes on in the background; the caller stops what it started).
   */
  async bound<T>(work: Promise<T>, stallMs: number): Promise<T> {
    this.mark('the scenario started');
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setInterval(
        () => {
          const idle = Date.now() - this.at;
          if (idle > stallMs) reject(new Error(`stalled: nothing progressed for ${Math.round(idle / 1000)} s (the last progress: ${this.what})`));
        },
        Math.min(1000, stallMs / 4),
      );
    });
    try {
      return await Promise.race([work, stalled]);
    } finally {
      clearInterval(timer);
    }
  }
}

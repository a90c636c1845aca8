/**
 * Runs tasks one at a time per key, in arrival order, in this process. An opening locks the
 * player's seed pair in Postgres, so a player's openings run one at a time anyway; queueing them
 * here first means a burst from one player waits in memory instead of holding one pooled
 * connection per waiting opening, which would leave other players' requests without any.
 * Other replicas are still serialised by the row lock.
 */
export class OneAtATime {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // The last task of a key removes it, so the map holds only keys with work under way.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work under way or queued (for tests). */
  get size(): number {
    return this.tails.size;
  }
}

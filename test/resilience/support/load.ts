/** One request of a load run and how it ended. */
export interface Outcome {
  worker: number;
  status: number;
  /** When it was sent and when it was answered (ms since the run began). */
  sentAt: number;
  answeredAt: number;
  body: string;
}

/** One step of a worker: sends one request and returns its status and body, or `done` when out of work. */
export type Step = (worker: number) => Promise<{ status: number; body: string } | 'done'>;

/**
 * A steady stream of requests: `workers` loops, each sending one request after the other with a
 * pause between them, until `stop`. Every answer is recorded, whatever its status.
 */
export class Load {
  readonly outcomes: Outcome[] = [];
  private stopped = false;
  private loops: Promise<void>[] = [];
  private readonly began = Date.now();

  constructor(
    private readonly workers: number,
    private readonly step: Step,
    private readonly pauseMs = 20,
  ) {}

  /** Milliseconds since the load was created. */
  now(): number {
    return Date.now() - this.began;
  }

  start(): this {
    this.loops = Array.from({ length: this.workers }, (_, w) => this.loop(w));
    return this;
  }

  /** Stops sending and waits for the requests in flight to be answered. */
  async stop(): Promise<Outcome[]> {
    this.stopped = true;
    await Promise.all(this.loops);
    return this.outcomes;
  }

  /** Outcomes answered within [from, to). */
  between(from: number, to: number): Outcome[] {
    return this.outcomes.filter((o) => o.answeredAt >= from && o.answeredAt < to);
  }

  private async loop(worker: number): Promise<void> {
    while (!this.stopped) {
      const sentAt = this.now();
      let r: Awaited<ReturnType<Step>>;
      try {
        r = await this.step(worker);
      } catch (err) {
        r = { status: -1, body: String(err) };
      }
      if (r === 'done') return;
      this.outcomes.push({ worker, status: r.status, sentAt, answeredAt: this.now(), body: r.body });
      await new Promise((res) => setTimeout(res, this.pauseMs));
    }
  }
}

/** Counts outcomes by status, e.g. `{ "200": 412 }`, for readable assertion failures. */
export function byStatus(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o.status] = (counts[o.status] ?? 0) + 1;
  return counts;
}

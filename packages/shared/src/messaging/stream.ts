import { RetentionPolicy, StorageType, type JetStreamManager } from 'nats';
import type { Logger } from 'pino';
import { prefixed, streamName } from '../runtime/subjects.js';

/** Name of the stack's durable grants stream. */
export function grantsStream(prefix: string): string {
  return streamName(prefix, 'GRANTS');
}

/**
 * Creates the grants stream (`<prefix>.grants.>`) if missing. On a NATS cluster, `replicas`
 * (JETSTREAM_REPLICAS, e.g. 3) makes the stream survive a server loss; an existing stream with
 * fewer replicas is raised to it when `update` is true (the grants keeper, or every service when
 * NATS has no users). A service with its own NATS user may only create the stream, never change
 * it: it leaves a differing stream as it is and returns `false` (the keeper brings it in line).
 *
 * The stream has no age limit: a grant must stay until every consumer has applied it, however
 * long a consumer is down. `GrantsJanitor` removes what every consumer acknowledged. (A stream
 * made with the former 7-day `max_age` is changed to none.)
 */
export async function ensureGrantsStream(jsm: JetStreamManager, prefix: string, replicas = 1, opts: { update?: boolean } = {}): Promise<boolean> {
  const name = grantsStream(prefix);
  // Only "not found" means missing: a timeout (a leader being elected) is thrown for the caller to retry.
  const existing = await jsm.streams.info(name).catch((err: Error) => {
    if (/stream not found/i.test(err.message)) return undefined;
    throw err;
  });
  if (existing) {
    if (existing.config.num_replicas < replicas || existing.config.max_age !== 0) {
      if (opts.update === false) return false;
      await jsm.streams.update(name, { ...existing.config, num_replicas: Math.max(replicas, existing.config.num_replicas), max_age: 0 });
    }
    return true;
  }
  try {
    await jsm.streams.add({
      name,
      subjects: [prefixed(prefix, 'grants.>')],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: 0,
      duplicate_window: 2 * 60 * 1e9,
      num_replicas: replicas,
    });
  } catch (err) {
    // Another replica may have created it between our two calls.
    await jsm.streams.info(name).catch(() => {
      throw err;
    });
  }
  return true;
}

/**
 * The highest stream sequence that every consumer of the stream has acknowledged: a consumer
 * with nothing pending has acknowledged everything up to the stream's end; otherwise its ack
 * floor. Undefined when the stream has no consumer yet (nothing may go).
 */
export async function acknowledgedByAll(jsm: JetStreamManager, stream: string): Promise<number | undefined> {
  const info = await jsm.streams.info(stream);
  let floor: number | undefined;
  for await (const c of jsm.consumers.list(stream)) {
    const done = c.num_pending === 0 && c.num_ack_pending === 0 && c.num_redelivered === 0;
    const acked = done ? info.state.last_seq : c.ack_floor.stream_seq;
    floor = floor === undefined ? acked : Math.min(floor, acked);
  }
  return floor;
}

/**
 * Removes from the grants stream the messages that every consumer acknowledged and that are older
 * than `keepMs`: a grant is never dropped before it was applied (the stream has no age limit),
 * and the stream does not grow for ever. Purging needs the `streams` NATS user: with per-process
 * NATS users the keeper (`npm run admin -- keep-grants`) runs it; without NATS users every service
 * does (purging is idempotent).
 */
export class GrantsJanitor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly prefix: string,
    private readonly keepMs: number,
    private readonly log: Logger,
    private readonly intervalMs = 10 * 60_000,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.sweep()
        .then((n) => void (n && this.log.info({ purged: n }, 'grants stream: removed messages every consumer acknowledged')))
        .catch((err) => this.log.warn({ err: String(err) }, 'grants stream sweep failed; will retry'))
        .finally(() => (this.timer = setTimeout(tick, this.intervalMs)));
    };
    // A random first delay spreads the sweeps of many replicas.
    this.timer = setTimeout(tick, Math.random() * this.intervalMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await this.running;
  }

  /** One sweep; returns how many messages were removed. */
  async sweep(): Promise<number> {
    const stream = grantsStream(this.prefix);
    const acked = await acknowledgedByAll(this.jsm, stream);
    if (acked === undefined) return 0;
    const upTo = await this.lastOlderThan(stream, acked, Date.now() - this.keepMs);
    if (upTo === undefined) return 0;
    const r = await this.jsm.streams.purge(stream, { seq: upTo + 1 });
    return r.purged;
  }

  /** The highest sequence ≤ `max` whose message is older than `before` (binary search on stored times). */
  private async lastOlderThan(stream: string, max: number, before: number): Promise<number | undefined> {
    const { state } = await this.jsm.streams.info(stream);
    let lo = state.first_seq;
    let hi = Math.min(max, state.last_seq);
    let found: number | undefined;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const at = await this.timeOf(stream, mid, hi);
      if (at === undefined) break;
      if (at.time < before) {
        found = at.seq;
        lo = at.seq + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** The time of the first stored message at or after `seq` (up to `hi`); gaps come from deletes. */
  private async timeOf(stream: string, seq: number, hi: number): Promise<{ seq: number; time: number } | undefined> {
    for (let s = seq; s <= hi; s++) {
      const m = await this.jsm.streams.getMessage(stream, { seq: s }).catch(() => undefined);
      if (m) return { seq: s, time: m.time.getTime() };
    }
    return undefined;
  }
}

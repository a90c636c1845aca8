import type { JetStreamClient } from 'nats';
import { headers as natsHeaders } from 'nats';
import type { Logger } from 'pino';
import type { CallContext } from '../contracts/context.js';
import type { EventContract } from '../contracts/subject.js';
import type { z } from 'zod';
import { encodeJson } from '../runtime/codec.js';
import { prefixed } from '../runtime/subjects.js';

export type { OutboxMessage };
import type { Pool, Queryable } from '../db/pool.js';
import {
  claimUnpublished,
  countUnpublished,
  insertOutboxMessage,
  markOutboxPublished,
  releaseOutboxClaims,
  unpublishedStats,
  type OutboxMessage,
} from './outbox-repo.js';
import { activeTraceContext, endSpan, injectTraceContext, remoteParent, SpanKind, startSpan } from '../observability/trace-context.js';

/** Header naming the subject on which the consumers announce that they applied the message. */
export const NOTIFY_HEADER = 'ccs-notify';

/**
 * Builds a durable message (payload validated, call and trace context in its headers) for the
 * caller to insert in its own statement (see `OUTBOX_INSERT`); `enqueue` does both. `notify` (an
 * `AppliedNotices` subject) asks the consumers to tell this process when they applied it.
 */
export function outboxMessage<P extends z.ZodType>(
  event: EventContract<P>,
  id: string,
  payload: z.infer<P>,
  ctx: CallContext,
  opts: { notify?: string } = {},
): OutboxMessage {
  const body = event.payload.parse(payload);
  const h: Record<string, string> = { 'ccs-request-id': ctx.requestId };
  if (opts.notify) h[NOTIFY_HEADER] = opts.notify;
  if (ctx.appId) h['ccs-app-id'] = ctx.appId;
  if (ctx.playerId) h['ccs-player-id'] = ctx.playerId;
  if (ctx.traceparent) h['traceparent'] = ctx.traceparent;
  // The row carries the context of a PRODUCER span started here, so each consumer's span (maybe
  // much later, in another service) joins the trace of the request that wrote the message.
  const { span, context } = startSpan(`enqueue ${event.subject}`, SpanKind.PRODUCER, activeTraceContext(), {
    'messaging.system': 'nats',
    'messaging.destination.name': event.subject,
    'messaging.message.id': id,
  });
  injectTraceContext(context, h);
  endSpan(span, false);
  return { id, subject: event.subject, payload: body, headers: h };
}

/**
 * Writes a durable message in the caller's transaction and returns it, so that the caller can
 * publish it right after its commit (`OutboxRelay.publishNow`); the relay publishes it otherwise.
 */
export async function enqueue<P extends z.ZodType>(
  tx: Queryable,
  event: EventContract<P>,
  id: string,
  payload: z.infer<P>,
  ctx: CallContext,
  opts: { notify?: string } = {},
): Promise<OutboxMessage> {
  const message = outboxMessage(event, id, payload, ctx, opts);
  await insertOutboxMessage(tx, message);
  return message;
}

/** How long a pass's claim on the rows it publishes lasts (another replica may take them after). */
const CLAIM_MS = 30_000;
/** Rows younger than this are left to the request that wrote them (it publishes them itself). */
const FRESH_MS = 3_000;
/** How often published rows are marked so, in one statement for all of them. */
const MARK_EVERY_MS = 25;

/**
 * Publishes outbox rows to JetStream with `Nats-Msg-Id` = row id (the stream de-duplicates
 * re-publishes; consumers apply a message id once), then marks them published. No transaction is
 * ever held across the network:
 * - a request that committed rows publishes them at once (`publishNow`) from memory;
 * - a pass (on a timer, or `flush`) claims unpublished rows for a while in one short statement
 *   (`FOR UPDATE SKIP LOCKED` in a single UPDATE, so replicas share the work), publishes them,
 *   and marks them;
 * - marks are batched: one UPDATE every few milliseconds for every row published meanwhile (and
 *   one per pass for the rows it claimed), each committed asynchronously (`markOutboxPublished`:
 *   a mark lost to a Postgres crash only re-publishes).
 * A crash between commit and publish, or between publish and mark, loses nothing: the row is
 * published (again) by a later pass, and the duplicate is recognised by its id.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private stopped = false;
  private marks: string[] = [];
  private marking: Promise<void> | undefined;
  private markTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly js: JetStreamClient,
    private readonly prefix: string,
    private readonly log: Logger,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.pass(FRESH_MS)
        .catch((err) => this.log.warn({ err: String(err) }, 'outbox relay pass failed; will retry'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /**
   * Publishes everything pending now, fresh rows included. A pass already under way may have
   * read the outbox before the caller's commit, so callers arriving during a pass share one more
   * pass after it.
   */
  flush(): Promise<void> {
    if (this.running) {
      this.next ??= this.running
        .catch(() => undefined)
        .then(() => {
          this.next = undefined;
          return this.stopped ? undefined : this.flush();
        });
      return this.next;
    }
    return this.pass(0);
  }

  private pass(freshMs: number): Promise<void> {
    this.running = this.drainPending(freshMs).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    await this.next?.catch(() => undefined);
    await this.markPublished().catch((err) =>
      this.log.warn({ err: String(err) }, 'could not mark published outbox rows; a later pass re-publishes them'),
    );
  }

  /** Number of messages not yet confirmed by the stream (for metrics and tests). */
  async backlog(): Promise<number> {
    return countUnpublished(this.pool);
  }

  /** Backlog and age of the oldest unpublished message, in one query on the partial index (for /metrics). */
  async pendingStats(): Promise<{ count: number; oldestAgeSeconds: number }> {
    return unpublishedStats(this.pool);
  }

  /**
   * Publishes messages its caller has just committed (as `enqueue` returned them) and waits for
   * the stream's acknowledgement, without reading the outbox; the rows are marked published a
   * moment later. If this fails, a relay pass publishes them.
   */
  async publishNow(messages: OutboxMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await Promise.all(messages.map((m) => this.publishRow(m)));
    this.queueMarks(messages.map((m) => m.id));
  }

  private async drainPending(freshMs: number): Promise<void> {
    for (;;) {
      const published = await this.publishBatch(100, freshMs);
      if (published < 100) return;
    }
  }

  /** Publishes one row with its headers unchanged; a PUBLISH span in the row's trace shows the relay's delay. */
  private async publishRow(row: OutboxMessage): Promise<void> {
    const h = natsHeaders();
    for (const [k, v] of Object.entries(row.headers)) h.set(k, v);
    const { span } = startSpan(`publish ${row.subject}`, SpanKind.PRODUCER, remoteParent(row.headers), {
      'messaging.system': 'nats',
      'messaging.destination.name': row.subject,
      'messaging.message.id': row.id,
    });
    try {
      await this.js.publish(prefixed(this.prefix, row.subject), encodeJson(row.payload), { msgID: row.id, headers: h });
      endSpan(span, false);
    } catch (err) {
      endSpan(span, true);
      throw err;
    }
  }

  /**
   * Claims up to `limit` unpublished rows older than `freshMs` that no pass holds (one statement,
   * no transaction left open), publishes them concurrently and marks them. Returns how many.
   */
  private async publishBatch(limit: number, freshMs: number): Promise<number> {
    const rows = await claimUnpublished(this.pool, limit, CLAIM_MS, freshMs);
    if (rows.length === 0) return 0;
    const results = await Promise.allSettled(rows.map((row) => this.publishRow(row)));
    const published = rows.filter((_, i) => results[i]!.status === 'fulfilled').map((r) => r.id);
    const failed = rows.filter((_, i) => results[i]!.status === 'rejected').map((r) => r.id);
    if (published.length) await markOutboxPublished(this.pool, published);
    if (failed.length) {
      // Not published (NATS away): release the claim, so the next pass tries again instead of after CLAIM_MS.
      await releaseOutboxClaims(this.pool, failed);
      throw (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
    }
    return rows.length;
  }

  private queueMarks(ids: string[]): void {
    this.marks.push(...ids);
    this.markTimer ??= setTimeout(() => {
      this.markTimer = undefined;
      void this.markPublished().catch((err) =>
        this.log.warn({ err: String(err) }, 'could not mark published outbox rows; a later pass re-publishes them'),
      );
    }, MARK_EVERY_MS);
  }

  /** Marks every row published since the last mark, in one statement (one at a time). */
  private async markPublished(): Promise<void> {
    while (this.marking) await this.marking.catch(() => undefined);
    if (this.marks.length === 0) return;
    const ids = this.marks;
    this.marks = [];
    this.marking = markOutboxPublished(this.pool, ids).finally(() => (this.marking = undefined));
    await this.marking;
  }
}

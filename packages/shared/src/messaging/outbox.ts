import type { JetStreamClient } from 'nats';
import { headers as natsHeaders } from 'nats';
import type { Logger } from 'pino';
import type { CallContext } from '../contracts/context.js';
import type { EventContract } from '../contracts/subject.js';
import type { z } from 'zod';
import { encodeJson } from '../runtime/codec.js';
import { prefixed } from '../runtime/subjects.js';
import type { Pool, Queryable } from '../db/pool.js';
import { activeTraceContext, endSpan, injectTraceContext, remoteParent, SpanKind, startSpan } from '../observability/trace-context.js';

/** Writes a durable message in the caller's transaction; the relay publishes it after commit. */
export async function enqueue<P extends z.ZodType>(
  tx: Queryable,
  event: EventContract<P>,
  id: string,
  payload: z.infer<P>,
  ctx: CallContext,
): Promise<void> {
  const body = event.payload.parse(payload);
  const h: Record<string, string> = { 'ccs-request-id': ctx.requestId };
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
  try {
    await tx.query('INSERT INTO outbox (id, subject, payload, headers) VALUES ($1, $2, $3, $4)', [id, event.subject, body, h]);
    endSpan(span, false);
  } catch (err) {
    endSpan(span, true);
    throw err;
  }
}

interface OutboxRow {
  id: string;
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
}

/**
 * Publishes outbox rows to JetStream with `Nats-Msg-Id` = row id (the stream de-duplicates
 * re-publishes), then marks them published. Runs on a timer and on demand; replicas share the
 * work through `FOR UPDATE SKIP LOCKED`, so a crash between commit and publish loses nothing.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private stopped = false;

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
      this.flush()
        .catch((err) => this.log.warn({ err: String(err) }, 'outbox relay pass failed; will retry'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /**
   * Publishes everything pending now. A pass already under way may have read the outbox before
   * the caller's commit, so callers arriving during a pass share one more pass after it.
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
    this.running = this.drainPending().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    await this.next?.catch(() => undefined);
  }

  /** Number of messages not yet confirmed by the stream (for metrics and tests). */
  async backlog(): Promise<number> {
    const r = await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
    return r.rows[0]!.n;
  }

  /** Backlog and age of the oldest unpublished message, in one query on the partial index (for /metrics). */
  async pendingStats(): Promise<{ count: number; oldestAgeSeconds: number }> {
    const r = await this.pool.query<{ n: number; age: number }>(
      `SELECT count(*)::int AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
       FROM outbox WHERE published_at IS NULL`,
    );
    return { count: r.rows[0]!.n, oldestAgeSeconds: Math.max(0, r.rows[0]!.age) };
  }

  /**
   * Publishes the named rows now, for a caller that just committed them and waits for their
   * effect: no waiting behind a relay pass. Rows a concurrent pass holds are left to that pass
   * (it publishes them); rows already published are skipped.
   */
  async publishNow(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.publishWhere('id = ANY($1::uuid[]) AND published_at IS NULL', [ids]);
  }

  private async drainPending(): Promise<void> {
    for (;;) {
      const published = await this.publishBatch(100);
      if (published < 100) return;
    }
  }

  /** Publishes one row with its headers unchanged; a PUBLISH span in the row's trace shows the relay's delay. */
  private async publishRow(row: OutboxRow): Promise<void> {
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

  private publishBatch(limit: number): Promise<number> {
    return this.publishWhere('published_at IS NULL ORDER BY created_at LIMIT $1', [limit]);
  }

  /**
   * One transaction: lock the matching unpublished rows (skipping rows another pass holds), publish
   * them concurrently (JetStream de-duplicates on the row id, so a retry after a partial failure
   * is safe), mark them published. Returns how many were published.
   */
  private async publishWhere(condition: string, params: unknown[]): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<OutboxRow>(
        `SELECT id, subject, payload, headers FROM outbox WHERE ${condition} FOR UPDATE SKIP LOCKED`,
        params,
      );
      await Promise.all(rows.map((row) => this.publishRow(row)));
      if (rows.length) {
        await client.query('UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[])', [rows.map((r) => r.id)]);
      }
      await client.query('COMMIT');
      return rows.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

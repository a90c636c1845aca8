import { signWebhook, WEBHOOK_SIGNATURE_HEADER, type Logger, type Pool, type ServiceMetrics } from '@ccs/shared';
import type { PlayersConfig } from '../config.js';

type SenderConfig = Pick<
  PlayersConfig,
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_RETRY_WINDOW_MS'
  | 'WEBHOOK_BACKOFF_BASE_MS'
  | 'WEBHOOK_BACKOFF_MAX_MS'
  | 'WEBHOOK_POLL_MS'
  | 'WEBHOOK_CONCURRENCY'
  | 'WEBHOOK_KEEP_DELIVERED_HOURS'
>;

/** A delivery this sender took, with what it sends. */
interface Claimed {
  id: string;
  endpoint_id: string;
  attempts: number;
  url: string;
  secret: string;
  event_id: string;
  event_type: string;
  player_id: string | null;
  occurred_at: Date;
  body: string;
}

/** How one attempt ended. */
interface Outcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/** Longest part of a receiver's error answer kept on the delivery. */
const ERROR_TEXT_MAX = 300;

/** The delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, ±20 % jitter. */
export function backoffMs(attempt: number, base: number, max: number, random = Math.random): number {
  const raw = Math.min(max, base * 2 ** Math.min(attempt - 1, 40));
  return Math.round(raw * (0.8 + 0.4 * random()));
}

/**
 * Sends webhook deliveries (docs/webhooks.md), at least once: every pass takes the due pending
 * deliveries of enabled endpoints (`FOR UPDATE SKIP LOCKED`, so replicas share them; the claim
 * lasts the request timeout plus a margin, after which a crashed sender's deliveries are taken
 * again), posts each signed body with a fresh timestamp, and records the outcome: 2xx delivered;
 * anything else (another status, a timeout, a refused connection) retried with exponential
 * backoff until the 24 h retry window ends, then parked.
 *
 * Order: a pass sends the deliveries of one endpoint and player one after another, oldest event
 * first; different players go in parallel. A failed delivery does not hold back later ones, so
 * a retried event can arrive after newer events of its player: order is not guaranteed.
 */
export class WebhookSender {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private stopped = true;
  private again = false;
  private lastCleanup = 0;

  constructor(
    private readonly pool: Pool,
    private readonly config: SenderConfig,
    private readonly log: Logger,
    private readonly metrics?: ServiceMetrics,
  ) {
    metrics?.observeWebhookBacklog(async () => {
      const r = await this.pool.query<{ pending: number; parked: number }>(
        `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'parked')::int AS parked
           FROM webhook_deliveries WHERE status <> 'delivered'`,
      );
      return r.rows[0]!;
    });
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  /** New deliveries exist: run a pass now (or right after the one running). */
  wake(): void {
    if (this.stopped) return;
    if (this.pass) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.pass = this.runPass()
        .catch((err) => this.log.warn({ err: String(err) }, 'webhook pass failed; will retry'))
        .finally(() => {
          this.pass = undefined;
          if (this.stopped) return;
          const more = this.again;
          this.again = false;
          this.schedule(more ? 0 : this.config.WEBHOOK_POLL_MS);
        });
    }, ms);
  }

  /** One pass: removes what is kept long enough (every 10 minutes), then sends due deliveries, a few batches at most. */
  async runPass(): Promise<void> {
    if (Date.now() - this.lastCleanup > 10 * 60_000) {
      this.lastCleanup = Date.now();
      const removed = await this.cleanup();
      if (removed) this.log.info({ removed }, 'webhooks: removed delivered deliveries past WEBHOOK_KEEP_DELIVERED_HOURS');
    }
    for (let round = 0; round < 10 && !this.stopped; round++) {
      const claimed = await this.claim(this.config.WEBHOOK_CONCURRENCY * 4);
      if (claimed.length === 0) return;
      await this.sendAll(claimed);
    }
    this.again = true;
  }

  /**
   * Deletes the deliveries delivered more than WEBHOOK_KEEP_DELIVERED_HOURS ago, and the events no
   * delivery needs any more. Pending and parked deliveries stay until sent, retried or removed with
   * their endpoint. Returns how many deliveries went.
   */
  async cleanup(): Promise<number> {
    const r = await this.pool.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM webhook_deliveries
          WHERE status = 'delivered' AND delivered_at < now() - make_interval(hours => $1)
         RETURNING id, event_id
       ),
       events AS (
         DELETE FROM webhook_events ev
          WHERE ev.id IN (SELECT event_id FROM gone)
            -- The statement still sees the rows it deletes: other deliveries of the event keep it.
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.id NOT IN (SELECT id FROM gone))
       )
       SELECT count(*)::int AS n FROM gone`,
      [this.config.WEBHOOK_KEEP_DELIVERED_HOURS],
    );
    return r.rows[0]!.n;
  }

  private async claim(limit: number): Promise<Claimed[]> {
    const leaseMs = this.config.WEBHOOK_TIMEOUT_MS + 30_000;
    const r = await this.pool.query<Claimed>(
      `WITH due AS (
         SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND e.enabled
            AND (d.claimed_until IS NULL OR d.claimed_until < now())
          ORDER BY d.next_attempt_at
          LIMIT $1
          FOR UPDATE OF d SKIP LOCKED
       )
       UPDATE webhook_deliveries d SET claimed_until = now() + make_interval(secs => $2::double precision / 1000)
         FROM due, webhook_endpoints e, webhook_events ev
        WHERE d.id = due.id AND e.id = d.endpoint_id AND ev.id = d.event_id
       RETURNING d.id, d.endpoint_id, d.attempts, e.url, e.secret, ev.id AS event_id, ev.type AS event_type, ev.player_id, ev.occurred_at, ev.body`,
      [limit, leaseMs],
    );
    return r.rows;
  }

  /** Sends the claimed deliveries: one queue per (endpoint, player), oldest event first, queues in parallel. */
  private async sendAll(claimed: Claimed[]): Promise<void> {
    const queues = new Map<string, Claimed[]>();
    for (const d of [...claimed].sort((a, b) => a.occurred_at.getTime() - b.occurred_at.getTime())) {
      const key = `${d.endpoint_id} ${d.player_id ?? d.id}`;
      queues.set(key, [...(queues.get(key) ?? []), d]);
    }
    const pending = [...queues.values()];
    const worker = async () => {
      for (let q = pending.shift(); q; q = pending.shift()) for (const d of q) await this.deliver(d);
    };
    await Promise.all(Array.from({ length: Math.min(this.config.WEBHOOK_CONCURRENCY, pending.length) }, worker));
  }

  private async deliver(d: Claimed): Promise<void> {
    const started = performance.now();
    const outcome = await this.attempt(d);
    const seconds = (performance.now() - started) / 1000;
    const attempt = d.attempts + 1;
    if (outcome.ok) {
      this.metrics?.webhookAttempt('delivered', seconds);
      await this.pool.query(
        `UPDATE webhook_deliveries SET status = 'delivered', attempts = $2, delivered_at = now(), last_attempt_at = now(),
                last_status_code = $3, last_error = NULL, claimed_until = NULL
          WHERE id = $1`,
        [d.id, attempt, outcome.status],
      );
      return;
    }
    const delay = backoffMs(attempt, this.config.WEBHOOK_BACKOFF_BASE_MS, this.config.WEBHOOK_BACKOFF_MAX_MS);
    const r = await this.pool.query<{ status: string }>(
      `UPDATE webhook_deliveries
          SET attempts = $2, last_attempt_at = now(), last_status_code = $3, last_error = $4, claimed_until = NULL,
              next_attempt_at = now() + make_interval(secs => $5::double precision / 1000),
              status = CASE WHEN now() + make_interval(secs => $5::double precision / 1000)
                                 > window_start + make_interval(secs => $6::double precision / 1000)
                            THEN 'parked' ELSE 'pending' END
        WHERE id = $1
        RETURNING status`,
      [d.id, attempt, outcome.status, outcome.error, delay, this.config.WEBHOOK_RETRY_WINDOW_MS],
    );
    const status = r.rows[0]?.status;
    this.metrics?.webhookAttempt(status === 'parked' ? 'parked' : 'retried', seconds);
    const fields = { deliveryId: d.id, endpointId: d.endpoint_id, eventId: d.event_id, attempt, status: outcome.status, error: outcome.error };
    if (status === 'parked') this.log.warn(fields, 'webhook delivery parked: its retry window is over (retry it from the console or the admin API)');
    else this.log.info({ ...fields, retryInMs: delay }, 'webhook delivery failed; will retry');
  }

  /** One POST of the signed body; never throws. Redirects are not followed (a 3xx is a failure). */
  private async attempt(d: Claimed): Promise<Outcome> {
    const t = Math.floor(Date.now() / 1000);
    try {
      const res = await fetch(d.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(this.config.WEBHOOK_TIMEOUT_MS),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'ccs-webhooks/1',
          [WEBHOOK_SIGNATURE_HEADER]: signWebhook(d.secret, t, d.body),
          'ccs-event-id': d.event_id,
          'ccs-event-type': d.event_type,
          'ccs-delivery-id': d.id,
          'ccs-delivery-attempt': String(d.attempts + 1),
        },
        body: d.body,
      });
      if (res.status >= 200 && res.status < 300) {
        await res.body?.cancel().catch(() => undefined);
        return { ok: true, status: res.status, error: null };
      }
      const text = await res.text().catch(() => '');
      return { ok: false, status: res.status, error: `HTTP ${res.status}${text ? `: ${text.slice(0, ERROR_TEXT_MAX)}` : ''}` };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const error =
        e.name === 'TimeoutError' || e.name === 'AbortError'
          ? `no answer within ${this.config.WEBHOOK_TIMEOUT_MS} ms`
          : `${e.cause?.code ?? e.name}: ${e.cause?.message ?? e.message}`.slice(0, ERROR_TEXT_MAX);
      return { ok: false, status: null, error };
    }
  }
}

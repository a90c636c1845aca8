import { signWebhook, WEBHOOK_SIGNATURE_HEADER, type Logger, type Pool, type ServiceMetrics } from '@ccs/shared';
import type { EgressConfig } from '../config.js';
import { parseAllowTargets, systemResolver, type Resolver } from '../destination.js';
import { postWebhook, type PostOutcome } from './post.js';

type SenderConfig = Pick<
  EgressConfig,
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_RETRY_WINDOW_MS'
  | 'WEBHOOK_BACKOFF_BASE_MS'
  | 'WEBHOOK_BACKOFF_MAX_MS'
  | 'WEBHOOK_POLL_MS'
  | 'WEBHOOK_CONCURRENCY'
  | 'WEBHOOK_APP_CONCURRENCY'
  | 'WEBHOOK_KEEP_DELIVERED_HOURS'
  | 'WEBHOOK_ALLOW_TARGETS'
>;

/** A delivery this sender took (its attempt already counted), with what it sends. */
interface Claimed {
  id: string;
  endpoint_id: string;
  app_id: string;
  /** This attempt's number (counted by the claim). */
  attempts: number;
  url: string;
  secret: string;
  event_id: string;
  event_type: string;
  player_id: string | null;
  body: string;
}

/** The delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, ±20 % jitter. */
export function backoffMs(attempt: number, base: number, max: number, random = Math.random): number {
  const raw = Math.min(max, base * 2 ** Math.min(attempt - 1, 40));
  return Math.round(raw * (0.8 + 0.4 * random()));
}

/**
 * The claim, one statement. Due deliveries of enabled endpoints are queued per (endpoint, player),
 * oldest event first, and only a queue's head is taken, and only when nothing of that queue is in
 * flight (one player's events go one after another). The heads are then dealt round-robin across
 * apps (`row_number() over (partition by app)`): each app gets at most WEBHOOK_APP_CONCURRENCY
 * requests in flight, counting the ones already running on any replica, so one app's slow or
 * failing endpoints never take the slots another app's deliveries need. The attempt is counted
 * here, before the request is sent, with the next try's time (backoff, ±20 % jitter) and a lease:
 * a sender that dies mid-attempt leaves a delivery that has moved towards parking, and another
 * sender takes it when the lease and the backoff are over.
 *
 * $1 how many, $2 lease ms, $3 per-app cap, $4 backoff base ms, $5 backoff max ms.
 */
const CLAIM = `
  WITH busy AS (
    SELECT d.endpoint_id, e.app_id, ev.player_id
      FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      JOIN webhook_events ev ON ev.id = d.event_id
     WHERE d.status = 'pending' AND d.claimed_until > now()
  ),
  busy_apps AS (SELECT app_id, count(*)::int AS n FROM busy GROUP BY app_id),
  due AS (
    SELECT d.id, e.app_id, d.endpoint_id, ev.player_id, ev.occurred_at, d.next_attempt_at,
           row_number() OVER (PARTITION BY d.endpoint_id, coalesce(ev.player_id, d.id) ORDER BY ev.occurred_at, d.id) AS place
      FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      JOIN webhook_events ev ON ev.id = d.event_id
     WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND e.enabled
       AND (d.claimed_until IS NULL OR d.claimed_until <= now())
  ),
  heads AS (
    SELECT due.* FROM due
     WHERE due.place = 1
       AND NOT EXISTS (SELECT 1 FROM busy b WHERE b.endpoint_id = due.endpoint_id AND b.player_id = due.player_id)
  ),
  turns AS (
    SELECT h.id, h.app_id, row_number() OVER (PARTITION BY h.app_id ORDER BY h.next_attempt_at, h.occurred_at, h.id) AS turn
      FROM heads h
  ),
  picked AS (
    SELECT t.id FROM turns t LEFT JOIN busy_apps b ON b.app_id = t.app_id
     WHERE t.turn <= $3 - coalesce(b.n, 0)
     ORDER BY t.turn, t.id
     LIMIT $1
  ),
  locked AS (
    SELECT d.id FROM webhook_deliveries d
     WHERE d.id IN (SELECT id FROM picked) AND d.status = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until <= now())
     FOR UPDATE SKIP LOCKED
  )
  UPDATE webhook_deliveries d
     SET attempts = d.attempts + 1,
         last_attempt_at = now(),
         claimed_until = now() + make_interval(secs => $2::double precision / 1000),
         next_attempt_at = now() + make_interval(secs =>
           least($5::double precision, $4::double precision * power(2, least(d.attempts, 40))) * (0.8 + 0.4 * random()) / 1000)
    FROM locked, webhook_endpoints e, webhook_events ev
   WHERE d.id = locked.id AND e.id = d.endpoint_id AND ev.id = d.event_id
  RETURNING d.id, d.endpoint_id, e.app_id, d.attempts, e.url, e.secret, ev.id AS event_id, ev.type AS event_type, ev.player_id, ev.body`;

/**
 * Sends webhook deliveries (docs/webhooks.md), at least once, in the egress worker. Up to
 * WEBHOOK_CONCURRENCY requests are in flight; whenever one ends (or new deliveries are due) the
 * free slots are filled by the claim above. Each request goes through `postWebhook` (destination
 * checked, at most 1 KiB of the answer read, one deadline). A 2xx is delivered; anything else
 * stores its status code and error class and is retried at the time the claim set, until that
 * time falls past the 24 h retry window: then it is parked.
 */
export class WebhookSender {
  private timer: NodeJS.Timeout | undefined;
  private filling: Promise<void> | undefined;
  private stopped = true;
  private again = false;
  private lastCleanup = 0;
  private readonly running = new Set<Promise<void>>();
  private readonly allow: Set<string>;

  constructor(
    private readonly pool: Pool,
    private readonly config: SenderConfig,
    private readonly log: Logger,
    private readonly metrics?: ServiceMetrics,
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allow = parseAllowTargets(config.WEBHOOK_ALLOW_TARGETS);
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

  /** Stops claiming; the requests in flight end (within WEBHOOK_TIMEOUT_MS) and record their outcome. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.filling;
    await Promise.all([...this.running]);
  }

  /** New deliveries exist or a slot is free: claim now (or right after the claim running). */
  wake(): void {
    if (this.stopped) return;
    if (this.filling) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.filling = this.fill()
        .catch((err) => this.log.warn({ err: String(err) }, 'webhook claim failed; will retry'))
        .finally(() => {
          this.filling = undefined;
          if (this.stopped) return;
          const more = this.again;
          this.again = false;
          this.schedule(more ? 0 : this.config.WEBHOOK_POLL_MS);
        });
    }, ms);
  }

  /** Removes what is kept long enough (every 10 minutes), parks abandoned attempts past their window, fills the free slots. */
  private async fill(): Promise<void> {
    if (Date.now() - this.lastCleanup > 10 * 60_000) {
      this.lastCleanup = Date.now();
      const removed = await this.cleanup();
      if (removed) this.log.info({ removed }, 'webhooks: removed delivered deliveries past WEBHOOK_KEEP_DELIVERED_HOURS');
    }
    await this.parkAbandoned();
    const free = this.config.WEBHOOK_CONCURRENCY - this.running.size;
    if (free <= 0) return;
    const claimed = await this.claim(free);
    for (const d of claimed) this.launch(d);
  }

  private launch(d: Claimed): void {
    const p: Promise<void> = this.deliver(d)
      .catch((err) => this.log.warn({ err: String(err), deliveryId: d.id }, 'webhook outcome not recorded; the delivery is retried after its lease'))
      .finally(() => {
        this.running.delete(p);
        this.wake();
      });
    this.running.add(p);
  }

  /**
   * An attempt whose sender died never records its outcome: once its lease is over it is retried
   * like a failure, or parked when its next try falls past the retry window (the same rule).
   */
  async parkAbandoned(): Promise<number> {
    const r = await this.pool.query(
      `UPDATE webhook_deliveries SET status = 'parked', claimed_until = NULL
        WHERE status = 'pending' AND attempts > 0 AND claimed_until IS NOT NULL AND claimed_until <= now()
          AND next_attempt_at > window_start + make_interval(secs => $1::double precision / 1000)`,
      [this.config.WEBHOOK_RETRY_WINDOW_MS],
    );
    return r.rowCount ?? 0;
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
    const r = await this.pool.query<Claimed>(CLAIM, [
      limit,
      leaseMs,
      this.config.WEBHOOK_APP_CONCURRENCY,
      this.config.WEBHOOK_BACKOFF_BASE_MS,
      this.config.WEBHOOK_BACKOFF_MAX_MS,
    ]);
    return r.rows;
  }

  private async deliver(d: Claimed): Promise<void> {
    const started = performance.now();
    const outcome = await this.attempt(d);
    const seconds = (performance.now() - started) / 1000;
    if (outcome.ok) {
      this.metrics?.webhookAttempt('delivered', seconds);
      await this.pool.query(
        `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), last_status_code = $2, last_error = NULL, claimed_until = NULL
          WHERE id = $1`,
        [d.id, outcome.status],
      );
      return;
    }
    // The next try comes the backoff after this failure (the claim's time stays only for a sender
    // that dies); past the retry window the delivery is parked.
    const delay = backoffMs(d.attempts, this.config.WEBHOOK_BACKOFF_BASE_MS, this.config.WEBHOOK_BACKOFF_MAX_MS);
    const r = await this.pool.query<{ status: string; next_attempt_at: Date }>(
      `UPDATE webhook_deliveries
          SET last_status_code = $2, last_error = $3, claimed_until = NULL,
              next_attempt_at = now() + make_interval(secs => $5::double precision / 1000),
              status = CASE WHEN now() + make_interval(secs => $5::double precision / 1000)
                                 > window_start + make_interval(secs => $4::double precision / 1000)
                            THEN 'parked' ELSE 'pending' END
        WHERE id = $1 AND status = 'pending'
        RETURNING status, next_attempt_at`,
      [d.id, outcome.status, outcome.error, this.config.WEBHOOK_RETRY_WINDOW_MS, delay],
    );
    const status = r.rows[0]?.status;
    this.metrics?.webhookAttempt(status === 'parked' ? 'parked' : 'retried', seconds);
    const fields = {
      deliveryId: d.id,
      endpointId: d.endpoint_id,
      appId: d.app_id,
      eventId: d.event_id,
      attempt: d.attempts,
      status: outcome.status,
      error: outcome.error,
      // Which rule refused a destination (never the address itself), or the socket error's code.
      ...(outcome.refusal ? { refused: 'range' in outcome.refusal ? outcome.refusal.range : 'non-canonical spelling' } : {}),
      ...(outcome.detail ? { detail: outcome.detail } : {}),
    };
    if (status === 'parked') this.log.warn(fields, 'webhook delivery parked: its retry window is over (retry it from the console or the admin API)');
    else this.log.info({ ...fields, nextAttemptAt: r.rows[0]?.next_attempt_at }, 'webhook delivery failed; will retry');
  }

  /** One POST of the signed body with a fresh timestamp; never throws. */
  private attempt(d: Claimed): Promise<PostOutcome> {
    const t = Math.floor(Date.now() / 1000);
    return postWebhook(
      d.url,
      {
        'content-type': 'application/json',
        'user-agent': 'ccs-webhooks/1',
        [WEBHOOK_SIGNATURE_HEADER]: signWebhook(d.secret, t, d.body),
        'ccs-event-id': d.event_id,
        'ccs-event-type': d.event_type,
        'ccs-delivery-id': d.id,
        'ccs-delivery-attempt': String(d.attempts),
      },
      d.body,
      { timeoutMs: this.config.WEBHOOK_TIMEOUT_MS, allow: this.allow, resolve: this.resolve },
    );
  }
}

import { signWebhook, WEBHOOK_SIGNATURE_HEADER, type Logger, type Pool, type ServiceMetrics } from '@ccs/shared';
import type { EgressConfig } from '../config.js';
import { parseAllowTargets, systemResolver, type Resolver } from '../webhooks/destination.js';
import {
  claimDueDeliveries,
  deliveryBacklog,
  parkAbandonedDeliveries,
  recordDelivered,
  recordFailedAttempt,
  removeDeliveredOlderThan,
  type ClaimedDelivery,
} from '../repositories/delivery-queue-repo.js';
import { postWebhook, type PostOutcome } from '../webhooks/post.js';

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

/** The delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, ±20 % jitter. */
export function backoffMs(attempt: number, base: number, max: number, random = Math.random): number {
  const raw = Math.min(max, base * 2 ** Math.min(attempt - 1, 40));
  return Math.round(raw * (0.8 + 0.4 * random()));
}

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
    metrics?.observeWebhookBacklog(() => deliveryBacklog(this.pool));
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

  private launch(d: ClaimedDelivery): void {
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
  parkAbandoned(): Promise<number> {
    return parkAbandonedDeliveries(this.pool, this.config.WEBHOOK_RETRY_WINDOW_MS);
  }

  /**
   * Deletes the deliveries delivered more than WEBHOOK_KEEP_DELIVERED_HOURS ago, and the events no
   * delivery needs any more. Pending and parked deliveries stay until sent, retried or removed with
   * their endpoint. Returns how many deliveries went.
   */
  cleanup(): Promise<number> {
    return removeDeliveredOlderThan(this.pool, this.config.WEBHOOK_KEEP_DELIVERED_HOURS);
  }

  private claim(limit: number): Promise<ClaimedDelivery[]> {
    return claimDueDeliveries(this.pool, {
      limit,
      leaseMs: this.config.WEBHOOK_TIMEOUT_MS + 30_000,
      appConcurrency: this.config.WEBHOOK_APP_CONCURRENCY,
      backoffBaseMs: this.config.WEBHOOK_BACKOFF_BASE_MS,
      backoffMaxMs: this.config.WEBHOOK_BACKOFF_MAX_MS,
    });
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const started = performance.now();
    const outcome = await this.attempt(d);
    const seconds = (performance.now() - started) / 1000;
    if (outcome.ok) {
      this.metrics?.webhookAttempt('delivered', seconds);
      await recordDelivered(this.pool, { id: d.id, endpointId: d.endpoint_id }, outcome.status);
      return;
    }
    // The next try comes the backoff after this failure (the claim's time stays only for a sender
    // that dies); past the retry window the delivery is parked.
    const delay = backoffMs(d.attempts, this.config.WEBHOOK_BACKOFF_BASE_MS, this.config.WEBHOOK_BACKOFF_MAX_MS);
    const next = await recordFailedAttempt(this.pool, {
      id: d.id,
      endpointId: d.endpoint_id,
      statusCode: outcome.status,
      error: outcome.error,
      retryWindowMs: this.config.WEBHOOK_RETRY_WINDOW_MS,
      delayMs: delay,
    });
    const status = next?.status;
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
    else this.log.info({ ...fields, nextAttemptAt: next?.next_attempt_at }, 'webhook delivery failed; will retry');
  }

  /** One POST of the signed body with a fresh timestamp; never throws. */
  private attempt(d: ClaimedDelivery): Promise<PostOutcome> {
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

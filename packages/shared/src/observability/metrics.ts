import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ErrorKind } from '../errors/kinds.js';

/** How a NATS request-reply call ended, seen from the caller. */
export type NatsRequestOutcome = 'ok' | 'error' | 'no_responders' | 'timeout';
/** How a service's handler answered a NATS request: `ok`, or the kind of the error it replied with. */
export type HandlerOutcome = 'ok' | ErrorKind;
/** What happened to one delivery of a durable message. */
/** `skipped`: a message the consumer declared it need not apply (ConsumerDef.skip), acked unread. */
export type ConsumerOutcome = 'applied' | 'duplicate' | 'retried' | 'parked' | 'skipped';
/** The sagas whose outcomes are counted. */
export type SagaName = 'opening' | 'purchase' | 'registration';
/** Saga outcomes (see docs/observability.md for which saga records which). */
export type SagaOutcome = 'opened' | 'granted' | 'grant_pending' | 'completed' | 'compensated' | 'failed';

/** Something that can tell how much of its outbox is not yet published (an OutboxRelay). */
export interface OutboxStatsSource {
  pendingStats(): Promise<{ count: number; oldestAgeSeconds: number }>;
}

/** The counters of a pg pool read on each scrape. */
export interface PoolStatsSource {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** Handler latencies: sub-millisecond cache hits up to the 5 s request bound and beyond. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Requests, errors and time per endpoint, for the data of `$SRV.STATS` (nats.js only times the sync part). */
export interface EndpointTally {
  requests: number;
  errors: number;
  total_ms: number;
}

/**
 * The Prometheus metrics of one service (agreed names, docs/observability.md): its own registry
 * with the default label `service` and prom-client's process metrics prefixed `ccs_`.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly handlerRequests: Counter<'subject' | 'outcome'>;
  private readonly handlerDuration: Histogram<'subject' | 'outcome'>;
  private readonly requestDuration: Histogram<'subject' | 'outcome'>;
  private readonly sagaOutcomes: Counter<'saga' | 'outcome'>;
  private readonly consumerMessages: Counter<'consumer' | 'outcome'>;
  private readonly repeats: Counter<'subject'>;
  private http?: { requests: Counter<'route' | 'method' | 'status'>; duration: Histogram<'route' | 'method' | 'status'> };
  private readonly tallies = new Map<string, EndpointTally>();
  private webhooks?: { attempts: Counter<'outcome'>; duration: Histogram<'outcome'> };

  constructor(readonly service: string) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, prefix: 'ccs_' });
    this.handlerRequests = new Counter({
      name: 'ccs_nats_handler_requests_total',
      help: 'NATS requests handled by this service, by subject and outcome (ok, or the kind of error replied)',
      labelNames: ['subject', 'outcome'],
      registers,
    });
    this.handlerDuration = new Histogram({
      name: 'ccs_nats_handler_duration_seconds',
      help: 'Time from receiving a NATS request to replying, by subject and outcome',
      labelNames: ['subject', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'ccs_nats_request_duration_seconds',
      help: 'NATS request-reply calls made by this process (Bus), by subject and outcome',
      labelNames: ['subject', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.sagaOutcomes = new Counter({
      name: 'ccs_saga_outcomes_total',
      help: 'Outcomes of the opening, purchase and registration sagas',
      labelNames: ['saga', 'outcome'],
      registers,
    });
    this.consumerMessages = new Counter({
      name: 'ccs_consumer_messages_total',
      help: 'Durable message deliveries by consumer and outcome',
      labelNames: ['consumer', 'outcome'],
      registers,
    });
    this.repeats = new Counter({
      name: 'ccs_nats_handler_repeats_total',
      help: 'Requests handled again after their database connection was lost (reads and keyed writes; runtime/repeat-on-db-loss.ts), by subject',
      labelNames: ['subject'],
      registers,
    });
  }

  /** A request handled again after losing its database connection. */
  repeatedAfterDbLoss(subject: string): void {
    this.repeats.inc({ subject });
  }

  /** A NATS request this service answered: `ok`, or the kind of the error it replied with. */
  handled(subject: string, outcome: HandlerOutcome, seconds: number): void {
    const labels = { subject, outcome };
    this.handlerRequests.inc(labels);
    this.handlerDuration.observe(labels, seconds);
    const t = this.tallies.get(subject) ?? { requests: 0, errors: 0, total_ms: 0 };
    t.requests += 1;
    if (outcome !== 'ok') t.errors += 1;
    t.total_ms += seconds * 1000;
    this.tallies.set(subject, t);
  }

  /** A NATS request this process made. */
  requested(subject: string, outcome: NatsRequestOutcome, seconds: number): void {
    this.requestDuration.observe({ subject, outcome }, seconds);
  }

  /** One outcome of a saga. */
  saga(saga: SagaName, outcome: SagaOutcome): void {
    this.sagaOutcomes.inc({ saga, outcome });
  }

  /** One delivery of a durable message. */
  consumed(consumer: string, outcome: ConsumerOutcome): void {
    this.consumerMessages.inc({ consumer, outcome });
  }

  /** An HTTP request the gateway answered; `route` is the route pattern, never the raw URL. */
  served(route: string, method: string, status: number, seconds: number): void {
    this.http ??= {
      requests: new Counter({
        name: 'ccs_http_requests_total',
        help: 'HTTP requests answered by the gateway, by route pattern, method and status',
        labelNames: ['route', 'method', 'status'],
        registers: [this.registry],
      }),
      duration: new Histogram({
        name: 'ccs_http_request_duration_seconds',
        help: 'HTTP request duration at the gateway, by route pattern, method and status',
        labelNames: ['route', 'method', 'status'],
        buckets: LATENCY_BUCKETS,
        registers: [this.registry],
      }),
    };
    const labels = { route, method, status: String(status) };
    this.http.requests.inc(labels);
    this.http.duration.observe(labels, seconds);
  }

  /** What `$SRV.STATS` reports as the endpoint's `data`. */
  tally(subject: string): EndpointTally {
    const t = this.tallies.get(subject) ?? { requests: 0, errors: 0, total_ms: 0 };
    return { ...t, total_ms: Math.round(t.total_ms) };
  }

  /** Reports the pool's connections (total, idle, waiting for one) on each scrape. */
  observePool(pool: PoolStatsSource): void {
    new Gauge({
      name: 'ccs_db_pool_connections',
      help: 'Postgres pool connections: total open, idle, and clients waiting for one',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }

  /**
   * Reports the outbox backlog and the age of its oldest unpublished row, read from the outbox
   * table on each scrape (one indexed query for both gauges). A failed read keeps the last values.
   */
  observeOutbox(sources: OutboxStatsSource[]): void {
    if (sources.length === 0) return;
    let sampling: Promise<{ count: number; oldestAgeSeconds: number } | undefined> | undefined;
    const sample = () =>
      (sampling ??= Promise.all(sources.map((s) => s.pendingStats()))
        .then((all) => ({ count: all.reduce((n, s) => n + s.count, 0), oldestAgeSeconds: Math.max(...all.map((s) => s.oldestAgeSeconds)) }))
        .catch(() => undefined)
        .finally(() => (sampling = undefined)));
    new Gauge({
      name: 'ccs_outbox_backlog',
      help: 'Outbox messages written but not yet confirmed by JetStream',
      registers: [this.registry],
      async collect() {
        const s = await sample();
        if (s) this.set(s.count);
      },
    });
    new Gauge({
      name: 'ccs_outbox_oldest_age_seconds',
      help: 'Age of the oldest unpublished outbox message (0 when the outbox is empty)',
      registers: [this.registry],
      async collect() {
        const s = await sample();
        if (s) this.set(s.oldestAgeSeconds);
      },
    });
  }

  /** One webhook attempt (egress): `delivered` (2xx), `retried` (failed, tried again later), `parked` (failed past its retry window). */
  webhookAttempt(outcome: 'delivered' | 'retried' | 'parked', seconds: number): void {
    this.webhooks ??= {
      attempts: new Counter({
        name: 'ccs_webhook_attempts_total',
        help: 'Webhook requests sent, by outcome: delivered, retried, parked',
        labelNames: ['outcome'],
        registers: [this.registry],
      }),
      duration: new Histogram({
        name: 'ccs_webhook_attempt_duration_seconds',
        help: 'Time a receiver took to answer a webhook request (or the timeout), by outcome',
        labelNames: ['outcome'],
        buckets: LATENCY_BUCKETS,
        registers: [this.registry],
      }),
    };
    this.webhooks.attempts.inc({ outcome });
    this.webhooks.duration.observe({ outcome }, seconds);
  }

  /** Reports the webhook deliveries waiting (pending) and parked, read on each scrape. A failed read keeps the last values. */
  observeWebhookBacklog(read: () => Promise<{ pending: number; parked: number }>): void {
    new Gauge({
      name: 'ccs_webhook_deliveries',
      help: 'Webhook deliveries not delivered yet, by status: pending (to be sent or retried), parked (need a retry by hand)',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const s = await read().catch(() => undefined);
        if (!s) return;
        this.set({ status: 'pending' }, s.pending);
        this.set({ status: 'parked' }, s.parked);
      },
    });
  }

  /** The exposition text and its content type, for a `/metrics` endpoint. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

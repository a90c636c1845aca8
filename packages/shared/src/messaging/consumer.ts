import { AsyncLocalStorage } from 'node:async_hooks';
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg, type NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { CallContext } from '../contracts/context.js';
import type { EventContract } from '../contracts/subject.js';
import type { Pool, Queryable } from '../db/pool.js';
import { contextFromHeaders, decodeJson } from '../runtime/codec.js';
import { prefixed, streamName } from '../runtime/subjects.js';
import { grantsStream } from './stream.js';
import type { ConsumerOutcome, ServiceMetrics } from '../observability/metrics.js';
import { runInScope } from '../observability/scope.js';
import { endSpan, remoteParent, SpanKind, startSpan, withTraceContext } from '../observability/trace-context.js';

/** Per delivery: whether the handler found the message already processed (counted as `duplicate`). */
const deliveryState = new AsyncLocalStorage<{ duplicate: boolean }>();

/** What a durable handler learns about the message besides its payload. */
export interface DeliveryInfo {
  messageId: string;
  ctx: CallContext;
  deliveryCount: number;
}

/** A durable JetStream consumer of one message kind, applied at least once and idempotently. */
export interface ConsumerDef<P extends z.ZodType = z.ZodType> {
  /** Durable name, unique per service and message kind (e.g. `wallet-registration-grants`). */
  durable: string;
  event: EventContract<P>;
  handle(payload: z.infer<P>, info: DeliveryInfo): Promise<void>;
  /** Deliveries before the message is parked for an operator; default 8. */
  maxDeliver?: number;
}

/** Declares a durable consumer (keeps the payload type tied to the event). */
export function consumer<P extends z.ZodType>(def: ConsumerDef<P>): ConsumerDef<P> {
  return def;
}

/**
 * Records a message id as processed inside the caller's transaction. Returns false when it was
 * already processed, in which case the caller must change nothing.
 */
export async function markProcessed(tx: Queryable, messageId: string, consumerName: string): Promise<boolean> {
  const r = await tx.query(
    'INSERT INTO processed_messages (message_id, consumer) VALUES ($1, $2) ON CONFLICT (message_id) DO NOTHING',
    [messageId, consumerName],
  );
  if (r.rowCount === 1) return true;
  const delivery = deliveryState.getStore();
  if (delivery) delivery.duplicate = true;
  return false;
}

/**
 * Subject on which a consumer announces that it applied a durable message:
 * `applied.<message id>.<durable>`, so a waiter can wait for one consumer or any.
 */
export function appliedSubject(prefix: string, messageId: string, durable = '*'): string {
  return prefixed(prefix, `applied.${messageId}.${durable}`);
}

/**
 * Waits (bounded) until every named message has been applied by a consumer (by the durable
 * `consumer` when given). Subscribe before publishing, then await `done`; it resolves with the
 * ids seen in time.
 */
export function watchApplied(nc: NatsConnection, prefix: string, messageIds: string[], consumer?: string) {
  const pending = new Set(messageIds);
  const seen = new Set<string>();
  let resolve!: () => void;
  const all = new Promise<void>((r) => (resolve = r));
  const subs = messageIds.map((id) =>
    nc.subscribe(appliedSubject(prefix, id, consumer), {
      max: 1,
      callback: () => {
        pending.delete(id);
        seen.add(id);
        if (pending.size === 0) resolve();
      },
    }),
  );
  if (messageIds.length === 0) resolve();
  return {
    async done(timeoutMs: number): Promise<Set<string>> {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      for (const s of subs) s.unsubscribe();
      return seen;
    },
  };
}

/** A running consumer; `stop` lets the message in hand finish. */
export interface RunningConsumer {
  stop(): Promise<void>;
}

/** Starts a durable pull consumer on the grants stream for one message kind. */
export async function startConsumer(
  def: ConsumerDef,
  deps: { nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager; pool: Pool; prefix: string; log: Logger; metrics: ServiceMetrics },
): Promise<RunningConsumer> {
  const stream = grantsStream(deps.prefix);
  const durable = streamName(deps.prefix, def.durable);
  await deps.jsm.consumers.add(stream, {
    durable_name: durable,
    filter_subject: prefixed(deps.prefix, def.event.subject),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: 30 * 1e9,
    max_ack_pending: 1000,
  });
  const c = await deps.js.consumers.get(stream, durable);
  const messages = await c.consume({ max_messages: 64 });
  const maxDeliver = def.maxDeliver ?? 8;
  const loop = (async () => {
    for await (const m of messages) await deliver(def, m, maxDeliver, deps);
  })();
  return {
    async stop() {
      await messages.close().catch(() => undefined);
      await loop.catch(() => undefined);
    },
  };
}

type DeliveryDeps = { nc: NatsConnection; pool: Pool; prefix: string; log: Logger; metrics: ServiceMetrics };

/**
 * One delivery, observed: a CONSUMER span continuing the trace the message was written in (its
 * `traceparent` header), log lines carrying the request id that caused it, and its outcome
 * counted in `ccs_consumer_messages_total`.
 */
async function deliver(def: ConsumerDef, m: JsMsg, maxDeliver: number, deps: DeliveryDeps): Promise<void> {
  const messageId = m.headers?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
  const ctx = contextFromHeaders(m.headers);
  const { span, context } = startSpan(`process ${def.event.subject}`, SpanKind.CONSUMER, remoteParent(m.headers), {
    'messaging.system': 'nats',
    'messaging.destination.name': def.event.subject,
    'messaging.consumer.group.name': def.durable,
    'messaging.message.id': messageId,
    'ccs.delivery_count': m.info.deliveryCount,
  });
  let outcome: ConsumerOutcome | undefined;
  try {
    outcome = await withTraceContext(context, () =>
      runInScope({ metrics: deps.metrics, requestId: ctx.requestId }, () => applyOnce(def, m, maxDeliver, deps, messageId, ctx)),
    );
    deps.metrics.consumed(def.durable, outcome);
  } finally {
    endSpan(span, outcome !== 'applied' && outcome !== 'duplicate', { 'ccs.outcome': outcome ?? 'failed' });
  }
}

async function applyOnce(def: ConsumerDef, m: JsMsg, maxDeliver: number, deps: DeliveryDeps, messageId: string, ctx: CallContext): Promise<ConsumerOutcome> {
  const log = deps.log.child({ consumer: def.durable, messageId });
  const parsed = def.event.payload.safeParse(decodeJson(m.data));
  if (!parsed.success) {
    await park(deps.pool, def, m, messageId, `invalid payload: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    log.error('durable message has an invalid payload; parked');
    m.ack();
    return 'parked';
  }
  try {
    const delivery = { duplicate: false };
    await deliveryState.run(delivery, () => def.handle(parsed.data, { messageId, ctx, deliveryCount: m.info.deliveryCount }));
    m.ack();
    deps.nc.publish(appliedSubject(deps.prefix, messageId, def.durable));
    log.debug({ duplicate: delivery.duplicate, attempt: m.info.deliveryCount }, 'durable message applied');
    return delivery.duplicate ? 'duplicate' : 'applied';
  } catch (err) {
    if (m.info.deliveryCount >= maxDeliver) {
      await park(deps.pool, def, m, messageId, String(err)).catch((e) => log.error({ err: String(e) }, 'could not park'));
      log.error({ err: String(err) }, 'durable message failed too often; parked');
      m.ack();
      return 'parked';
    }
    log.warn({ err: String(err), attempt: m.info.deliveryCount }, 'durable message failed; will retry');
    m.nak(Math.min(30_000, 250 * 2 ** m.info.deliveryCount));
    return 'retried';
  }
}

async function park(pool: Pool, def: ConsumerDef, m: JsMsg, messageId: string, error: string): Promise<void> {
  await pool.query(
    'INSERT INTO parked_messages (message_id, consumer, subject, payload, error) VALUES ($1, $2, $3, $4, $5)',
    [messageId, def.durable, m.subject, decodeJson(m.data) ?? null, error.slice(0, 2000)],
  );
}

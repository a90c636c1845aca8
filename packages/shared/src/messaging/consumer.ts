import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg, type NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { CallContext } from '../contracts/context.js';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.js';
import { AppError } from '../errors/app-error.js';
import { isDatabaseUnavailable } from '../errors/database.js';
import { contextFromHeaders, decodeJson } from '../runtime/codec.js';
import { prefixed, streamName } from '../runtime/subjects.js';
import { grantsStream } from './stream.js';
import type { ConsumerOutcome, ServiceMetrics } from '../observability/metrics.js';
import { runInScope } from '../observability/scope.js';
import { endSpan, remoteParent, SpanKind, startSpan, withTraceContext, type Span, type TraceContext } from '../observability/trace-context.js';
import { isNoticeSubject, noticeOptions } from './applied-notices.js';
import type { ConsumerDef, Delivery } from './consumer-def.js';
import { NOTIFY_HEADER } from './outbox.js';
import { parkMessage } from './parked-messages.js';
import { appliedSubject, deliveryState, markProcessedBatch } from './processed.js';

const encoder = new TextEncoder();

/** A running consumer; `stop` lets the messages in hand finish. */
export interface RunningConsumer {
  stop(): Promise<void>;
}

/**
 * How long JetStream waits for an ack before redelivering: what a crashed replica held is
 * redelivered (to another replica, or to it once restarted) within this. Short, so grants converge
 * within seconds of a crash; messages that are merely slow (pulled and waiting in the buffer, or
 * in a long batch) are kept alive with in-progress acks every half of it, so a busy consumer
 * causes no redelivery storm.
 */
export const ACK_WAIT_MS = 4_000;

type ConsumerDeps = {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  pool: Pool;
  prefix: string;
  log: Logger;
  metrics: ServiceMetrics;
};

/** Starts a durable pull consumer on the grants stream for one message kind. */
export async function startConsumer(def: ConsumerDef, deps: ConsumerDeps): Promise<RunningConsumer> {
  const stream = grantsStream(deps.prefix);
  const durable = streamName(deps.prefix, def.durable);
  await ensureDurable(def, deps, stream, durable);
  const c = await deps.js.consumers.get(stream, durable);
  // Messages arrive in a buffer; one loop applies what has arrived, a batch (or one) at a time.
  const buffer: JsMsg[] = [];
  let wake: (() => void) | undefined;
  let closing = false;
  const messages = await c.consume({
    max_messages: 256,
    callback: (m) => {
      buffer.push(m);
      wake?.();
    },
  });
  const maxDeliver = def.maxDeliver ?? 8;
  const batchSize = def.handle ? 1 : (def.batchSize ?? 100);
  let inHand: JsMsg[] = [];
  const keepAlive = setInterval(() => {
    for (const m of inHand) m.working();
    for (const m of buffer) m.working();
  }, ACK_WAIT_MS / 2);
  keepAlive.unref();
  const loop = (async () => {
    for (;;) {
      if (buffer.length === 0) {
        if (closing) return;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
        continue;
      }
      inHand = buffer.splice(0, batchSize);
      await deliverBatch(def, inHand, maxDeliver, deps).catch((err) =>
        deps.log.error({ err: String(err), consumer: def.durable }, 'consumer batch failed unexpectedly'),
      );
      inHand = [];
    }
  })();
  return {
    async stop() {
      await messages.close().catch(() => undefined);
      closing = true;
      wake?.();
      await loop;
      clearInterval(keepAlive);
    },
  };
}

/** Creates the durable consumer, or brings one made by an earlier version with other settings to these. */
async function ensureDurable(def: ConsumerDef, deps: ConsumerDeps, stream: string, durable: string): Promise<void> {
  const settings = { ack_wait: ACK_WAIT_MS * 1e6, max_ack_pending: 1000 };
  try {
    await deps.jsm.consumers.add(stream, {
      durable_name: durable,
      filter_subject: prefixed(deps.prefix, def.event.subject),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ...settings,
    });
  } catch (err) {
    const existing = await deps.jsm.consumers.info(stream, durable).catch(() => undefined);
    if (!existing) throw err;
    await deps.jsm.consumers.update(stream, durable, settings);
  }
}

type DeliveryDeps = { nc: NatsConnection; pool: Pool; prefix: string; log: Logger; metrics: ServiceMetrics };

/** A pulled message, parsed, with its CONSUMER span (continuing the trace it was written in). */
interface Pulled {
  m: JsMsg;
  messageId: string;
  ctx: CallContext;
  span: Span;
  context: TraceContext;
}

/**
 * Applies pulled messages: each with `handle` alone, or all with `applyBatch` together. Every
 * delivery is observed: a CONSUMER span continuing the trace the message was written in (its
 * `traceparent` header), log lines carrying the request id that caused it, and its outcome counted
 * in `ccs_consumer_messages_total`.
 */
async function deliverBatch(def: ConsumerDef, msgs: JsMsg[], maxDeliver: number, deps: DeliveryDeps): Promise<void> {
  const valid: Valid[] = [];
  for (const m of msgs) {
    const v = await pull(def, m, deps);
    if (v) valid.push(v);
  }
  if (valid.length === 0) return;
  if (def.handle) {
    for (const v of valid) await handleOne(def, v, maxDeliver, deps);
    return;
  }
  let fresh: Set<string>;
  // The handler may leave a notice on a delivery (what applying it decided); finish sends it.
  const deliveries = valid.map(toDelivery);
  try {
    fresh = def.applyIdempotent
      ? await def.applyIdempotent(deps.pool, deliveries)
      : await withTransaction(deps.pool, (tx) => applyTogether(def, tx, valid, deliveries));
  } catch (err) {
    if (valid.length > 1 && !isDatabaseUnavailable(err) && !(err instanceof AppError && err.code === 'database_unavailable')) {
      // Find the message that fails: each alone, so the others are applied now.
      for (const v of valid) {
        v.span.end();
        await deliverBatch(def, [v.m], maxDeliver, deps);
      }
      return;
    }
    for (const v of valid) await failed(def, v, err, maxDeliver, deps);
    return;
  }
  const counted = new Set<string>();
  valid.forEach((v, i) => {
    v.m.ack();
    const key = def.processedId ? def.processedId(v.payload) : v.messageId;
    const applied = fresh.has(key) && !counted.has(key);
    counted.add(key);
    finish(def, v, applied ? 'applied' : 'duplicate', deps, deliveries[i]!.notice);
  });
}

/** A pulled message whose payload parsed. */
type Valid = Pulled & { payload: unknown };

/**
 * One pulled message: its CONSUMER span started and its payload parsed. An invalid payload is
 * parked (or retried when parking fails) and undefined returned.
 */
async function pull(def: ConsumerDef, m: JsMsg, deps: DeliveryDeps): Promise<Valid | undefined> {
  const messageId = m.headers?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
  const ctx = contextFromHeaders(m.headers);
  const { span, context } = startSpan(`process ${def.event.subject}`, SpanKind.CONSUMER, remoteParent(m.headers), {
    'messaging.system': 'nats',
    'messaging.destination.name': def.event.subject,
    'messaging.consumer.group.name': def.durable,
    'messaging.message.id': messageId,
    'ccs.delivery_count': m.info.deliveryCount,
  });
  const parsed = def.event.payload.safeParse(decodeJson(m.data));
  if (parsed.success) return { m, messageId, ctx, span, context, payload: parsed.data };
  const reason = `invalid payload: ${parsed.error.issues.map((i) => i.message).join('; ')}`;
  try {
    await park(deps.pool, def, m, messageId, reason);
  } catch (e) {
    deps.log.error({ err: String(e), messageId }, 'could not park an invalid message; it will be retried');
    m.nak(5_000);
    finish(def, { m, messageId, ctx, span, context }, 'retried', deps);
    return undefined;
  }
  deps.log.error({ consumer: def.durable, messageId, requestId: ctx.requestId }, 'durable message has an invalid payload; parked');
  m.ack();
  finish(def, { m, messageId, ctx, span, context }, 'parked', deps);
  return undefined;
}

/** In the caller's transaction: marks the batch's ids processed, applies the ones that were not. */
async function applyTogether(
  def: ConsumerDef,
  tx: PoolClient,
  valid: (Pulled & { payload: unknown })[],
  deliveries: Delivery<unknown>[],
): Promise<Set<string>> {
  const keyOf = (v: Pulled & { payload: unknown }) => (def.processedId ? def.processedId(v.payload) : v.messageId);
  const ids = [...new Set(valid.map(keyOf))];
  const fresh = await markProcessedBatch(tx, ids, def.durable);
  const todo = new Set(fresh);
  const batch = deliveries.filter((_, i) => todo.delete(keyOf(valid[i]!)));
  if (batch.length) {
    await def.applyBatch!(tx, batch);
  }
  return fresh;
}

const toDelivery = (v: Pulled & { payload: unknown }): Delivery<unknown> => ({
  payload: v.payload,
  messageId: v.messageId,
  ctx: v.ctx,
  deliveryCount: v.m.info.deliveryCount,
});

/** One message with a per-message handler, in the trace and log scope of the request that caused it. */
async function handleOne(def: ConsumerDef, v: Pulled & { payload: unknown }, maxDeliver: number, deps: DeliveryDeps): Promise<void> {
  const delivery = { duplicate: false };
  try {
    await withTraceContext(v.context, () =>
      runInScope({ metrics: deps.metrics, requestId: v.ctx.requestId }, () =>
        deliveryState.run(delivery, () => def.handle!(v.payload, { messageId: v.messageId, ctx: v.ctx, deliveryCount: v.m.info.deliveryCount })),
      ),
    );
  } catch (err) {
    await failed(def, v, err, maxDeliver, deps);
    return;
  }
  v.m.ack();
  finish(def, v, delivery.duplicate ? 'duplicate' : 'applied', deps);
}

/**
 * A message that could not be applied: retried later with backoff, or parked after `maxDeliver`
 * tries. A database that is away is not the message's fault: such a failure is retried however
 * often (never parked), and a message whose parking fails is retried rather than acked, so no
 * grant is ever dropped by an outage.
 */
async function failed(def: ConsumerDef, v: Pulled, err: unknown, maxDeliver: number, deps: DeliveryDeps): Promise<void> {
  const log = deps.log.child({ consumer: def.durable, messageId: v.messageId, requestId: v.ctx.requestId });
  if (isDatabaseUnavailable(err) || (err instanceof AppError && err.code === 'database_unavailable')) {
    log.warn({ err: String(err), attempt: v.m.info.deliveryCount }, 'database unavailable; the message will be retried');
    v.m.nak(Math.min(5_000, 250 * 2 ** Math.min(v.m.info.deliveryCount, 5)));
    finish(def, v, 'retried', deps);
    return;
  }
  if (v.m.info.deliveryCount >= maxDeliver) {
    try {
      await park(deps.pool, def, v.m, v.messageId, String(err));
    } catch (e) {
      log.error({ err: String(e) }, 'could not park; the message will be retried');
      v.m.nak(5_000);
      finish(def, v, 'retried', deps);
      return;
    }
    log.error({ err: String(err) }, 'durable message failed too often; parked');
    v.m.ack();
    finish(def, v, 'parked', deps);
    return;
  }
  log.warn({ err: String(err), attempt: v.m.info.deliveryCount }, 'durable message failed; will retry');
  v.m.nak(Math.min(30_000, 250 * 2 ** v.m.info.deliveryCount));
  finish(def, v, 'retried', deps);
}

/**
 * Ends a delivery: counts its outcome, ends its span and tells whoever waits that it was applied
 * (with the handler's `notice`, if it left one, in a header: listeners that know no notices still
 * read the message id as before).
 */
function finish(def: ConsumerDef, v: Pulled, outcome: ConsumerOutcome, deps: DeliveryDeps, notice?: unknown): void {
  deps.metrics.consumed(def.durable, outcome);
  endSpan(v.span, outcome !== 'applied' && outcome !== 'duplicate', { 'ccs.outcome': outcome });
  if (outcome !== 'applied' && outcome !== 'duplicate') return;
  const notify = v.m.headers?.get(NOTIFY_HEADER);
  if (notify && isNoticeSubject(deps.prefix, notify)) deps.nc.publish(`${notify}.${def.durable}`, encoder.encode(v.messageId), noticeOptions(notice));
  else deps.nc.publish(appliedSubject(deps.prefix, v.messageId, def.durable));
  withTraceContext(v.context, () =>
    deps.log.debug(
      {
        consumer: def.durable,
        messageId: v.messageId,
        requestId: v.ctx.requestId,
        duplicate: outcome === 'duplicate',
        attempt: v.m.info.deliveryCount,
      },
      'durable message applied',
    ),
  );
}

function park(pool: Pool, def: ConsumerDef, m: JsMsg, messageId: string, error: string): Promise<void> {
  return parkMessage(pool, { messageId, consumer: def.durable, subject: m.subject, payload: decodeJson(m.data) ?? null, error });
}

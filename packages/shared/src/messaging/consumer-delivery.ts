import type { JsMsg } from 'nats';
import { withTransaction, type PoolClient } from '../db/pool.js';
import { AppError } from '../errors/app-error.js';
import { isDatabaseUnavailable } from '../errors/database.js';
import { contextFromHeaders, decodeJson } from '../runtime/codec.js';
import { runInScope } from '../observability/scope.js';
import { remoteParent, SpanKind, startSpan, withTraceContext } from '../observability/trace-context.js';
import type { ConsumerDef, Delivery } from './consumer-def.js';
import { failed, finish, park, type DeliveryDeps, type Pulled } from './consumer-outcome.js';
import { deliveryState, markProcessedBatch } from './processed.js';

/**
 * Applies pulled messages: each with `handle` alone, or all with `applyBatch` together. Every
 * delivery is observed: a CONSUMER span continuing the trace the message was written in (its
 * `traceparent` header), log lines carrying the request id that caused it, and its outcome counted
 * in `ccs_consumer_messages_total`.
 */
export async function deliverBatch(def: ConsumerDef, msgs: JsMsg[], maxDeliver: number, deps: DeliveryDeps): Promise<void> {
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
  if (def.applyBatch) def.afterCommit?.(deliveries);
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
  if (def.skip && (await skips(def, ctx, deps))) {
    m.ack();
    finish(def, { m, messageId, ctx, span, context }, 'skipped', deps);
    return undefined;
  }
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

/** The consumer's skip, an error in it taken as "apply" (a message applied needlessly costs work; one skipped wrongly is lost). */
async function skips(def: ConsumerDef, ctx: ReturnType<typeof contextFromHeaders>, deps: DeliveryDeps): Promise<boolean> {
  try {
    return await def.skip!(ctx);
  } catch (err) {
    deps.log.warn({ consumer: def.durable, err: String(err) }, 'skip check failed; applying the message');
    return false;
  }
}

import type { JsMsg, NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { CallContext } from '../contracts/context.js';
import type { Pool } from '../db/pool.js';
import { AppError } from '../errors/app-error.js';
import { isDatabaseUnavailable } from '../errors/database.js';
import { decodeJson } from '../runtime/codec.js';
import type { ConsumerOutcome, ServiceMetrics } from '../observability/metrics.js';
import { endSpan, withTraceContext, type Span, type TraceContext } from '../observability/trace-context.js';
import { isNoticeSubject, noticeOptions } from './applied-notices.js';
import type { ConsumerDef } from './consumer-def.js';
import { NOTIFY_HEADER } from './outbox.js';
import { parkMessage } from './parked-messages.js';
import { appliedSubject } from './processed.js';

// How a delivery ends: acked and announced, retried with backoff, or parked.

const encoder = new TextEncoder();

export type DeliveryDeps = { nc: NatsConnection; pool: Pool; prefix: string; log: Logger; metrics: ServiceMetrics };

/** A pulled message, parsed, with its CONSUMER span (continuing the trace it was written in). */
export interface Pulled {
  m: JsMsg;
  messageId: string;
  ctx: CallContext;
  span: Span;
  context: TraceContext;
}

/**
 * A message that could not be applied: retried later with backoff, or parked after `maxDeliver`
 * tries. A database that is away is not the message's fault: such a failure is retried however
 * often (never parked), and a message whose parking fails is retried rather than acked, so no
 * grant is ever dropped by an outage.
 */
export async function failed(def: ConsumerDef, v: Pulled, err: unknown, maxDeliver: number, deps: DeliveryDeps): Promise<void> {
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
export function finish(def: ConsumerDef, v: Pulled, outcome: ConsumerOutcome, deps: DeliveryDeps, notice?: unknown): void {
  deps.metrics.consumed(def.durable, outcome);
  endSpan(v.span, outcome === 'retried' || outcome === 'parked', { 'ccs.outcome': outcome });
  if (outcome === 'skipped') {
    withTraceContext(v.context, () =>
      deps.log.debug(
        { consumer: def.durable, messageId: v.messageId, requestId: v.ctx.requestId },
        'durable message skipped: nothing of it is wanted here',
      ),
    );
    return;
  }
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

export function park(pool: Pool, def: ConsumerDef, m: JsMsg, messageId: string, error: string): Promise<void> {
  return parkMessage(pool, { messageId, consumer: def.durable, subject: m.subject, payload: decodeJson(m.data) ?? null, error });
}

import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { activeTracer } from './active-tracer.js';
import type { MsgHdrs } from 'nats';

export { SpanKind, type Context as TraceContext, type Span };

/** Headers trace context travels in: NATS message headers, HTTP request headers, or an outbox row's record. */
export type TraceCarrier = MsgHdrs | Record<string, string | string[] | undefined>;

const isMsgHdrs = (h: TraceCarrier): h is MsgHdrs => typeof (h as MsgHdrs).get === 'function' && typeof (h as MsgHdrs).keys === 'function';

const getter: TextMapGetter<TraceCarrier | undefined> = {
  keys: (h) => (!h ? [] : isMsgHdrs(h) ? h.keys() : Object.keys(h)),
  get: (h, key) => {
    if (!h) return undefined;
    const v = isMsgHdrs(h) ? h.get(key) : h[key];
    return v === '' ? undefined : v;
  },
};

const setter: TextMapSetter<TraceCarrier> = {
  set: (h, key, value) => (isMsgHdrs(h) ? h.set(key, value) : void (h[key] = value)),
};

/**
 * The context a message or request continues: the `traceparent` (and `tracestate`) it carries,
 * on a fresh root, so nothing of whatever context the transport's callback happened to run in
 * leaks into it.
 */
export function remoteParent(carrier: TraceCarrier | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, carrier, getter);
}

/** A context in which no span is recorded (health checks, scrapes): probes would drown real traces. */
export function untracedContext(): Context {
  return suppressTracing(ROOT_CONTEXT);
}

/**
 * Writes the trace context of `ctx` into the carrier, replacing a `traceparent` already there.
 * Without a registered propagator (tracing never initialised) this changes nothing, and the
 * traceparent the call context carried passes through as it came.
 */
export function injectTraceContext(ctx: Context, carrier: TraceCarrier): void {
  propagation.inject(ctx, carrier, setter);
}

/** A span and the context in which it is the active one. */
export interface StartedSpan {
  span: Span;
  context: Context;
}

/** The span handed out while tracing is off: records nothing, carries no trace (one for the process). */
const UNTRACED_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Starts a span as a child of `parent`. While tracing is off (initTracing registered nothing) no
 * span or context is made at all: every call gets the same non-recording span and `parent` back,
 * which is all the no-op tracer's span amounted to (without a provider nothing propagates or
 * records, and no context manager keeps a context).
 */
export function startSpan(name: string, kind: SpanKind, parent: Context, attributes: Attributes = {}): StartedSpan {
  const tracer = activeTracer();
  if (!tracer) return { span: UNTRACED_SPAN, context: parent };
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends a span, marking it failed when `failed` (a 5xx, a transport error, a parked message). */
export function endSpan(span: Span, failed: boolean, attributes: Attributes = {}): void {
  span.setAttributes(attributes);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Runs fn with ctx as the active trace context. */
export function withTraceContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** The active trace context (to give a span started now the right parent). */
export function activeTraceContext(): Context {
  return context.active();
}

/** Trace and span id of the active span, when there is a valid one (for log lines). */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const sc = trace.getSpanContext(context.active());
  if (!sc || !trace.isSpanContextValid(sc)) return undefined;
  return { traceId: sc.traceId, spanId: sc.spanId };
}

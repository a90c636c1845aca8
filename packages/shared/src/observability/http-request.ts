import type { ServiceMetrics } from './metrics.js';
import { runInScope, type ObservabilityScope } from './scope.js';
import {
  endSpan,
  remoteParent,
  SpanKind,
  startSpan,
  untracedContext,
  withTraceContext,
  type Span,
  type TraceCarrier,
  type TraceContext,
} from './trace-context.js';

/** Route label of requests that matched no route (the raw URL would make the label unbounded). */
export const UNMATCHED_ROUTE = 'unmatched';

/** One HTTP request at the gateway, observed from arrival to response. */
export interface HttpObservation {
  readonly route: string;
  readonly method: string;
  readonly span: Span;
  readonly context: TraceContext;
  readonly scope: ObservabilityScope;
  readonly started: number;
  ended: boolean;
}

/**
 * Starts observing a request: a SERVER span named `<METHOD> <route pattern>` that continues an
 * incoming `traceparent` (untraced for probes and scrapes), and the scope that gives every log
 * line and NATS call it causes its request id and trace.
 */
export function beginHttpRequest(
  metrics: ServiceMetrics,
  req: { method: string; route: string | undefined; path: string; requestId: string; headers: TraceCarrier; traced: boolean },
): HttpObservation {
  const route = req.route ?? UNMATCHED_ROUTE;
  const parent = req.traced ? remoteParent(req.headers) : untracedContext();
  const { span, context } = startSpan(req.route ? `${req.method} ${route}` : req.method, SpanKind.SERVER, parent, {
    'http.request.method': req.method,
    'http.route': route,
    'url.path': req.path,
    'ccs.request_id': req.requestId,
  });
  return { route, method: req.method, span, context, scope: { metrics, requestId: req.requestId }, started: performance.now(), ended: false };
}

/** Runs fn inside the request's trace context and scope (Fastify hooks re-enter it after body parsing). */
export function runObserved<T>(o: HttpObservation, fn: () => T): T {
  return withTraceContext(o.context, () => runInScope(o.scope, fn));
}

/**
 * Ends the observation once: counts the request in `ccs_http_*` by route pattern, method and
 * status, and ends the span. Returns the duration in milliseconds.
 */
export function endHttpRequest(o: HttpObservation, status: number): number {
  const seconds = (performance.now() - o.started) / 1000;
  if (o.ended) return seconds * 1000;
  o.ended = true;
  o.scope.metrics.served(o.route, o.method, status, seconds);
  endSpan(o.span, status >= 500, { 'http.response.status_code': status });
  return seconds * 1000;
}

import type { MsgHdrs } from 'nats';
import type { Logger } from 'pino';
import { isFailureKind } from '../errors/kinds.js';
import type { HandlerOutcome, ServiceMetrics } from './metrics.js';
import { runInScope } from './scope.js';
import { endSpan, remoteParent, SpanKind, startSpan, untracedContext, withTraceContext } from './trace-context.js';

/** How one service endpoint is observed. */
export interface EndpointObservation {
  service: string;
  /** The unprefixed subject (`chests.v1.open`): the metric label and span name. */
  subject: string;
  metrics: ServiceMetrics;
  log: Logger;
  /** False for the health subject: readiness probes every few seconds would drown real traces. */
  traced: boolean;
}

/**
 * Runs the handling of one NATS request observed: in a SERVER span continuing the caller's
 * `traceparent`, in the scope that gives log lines the request id and trace id, and counted in
 * `ccs_nats_handler_*` by subject and the outcome `work` replied with (`ok` or an error kind).
 */
export function observeHandler(
  o: EndpointObservation,
  headers: MsgHdrs | undefined,
  requestId: string,
  work: () => Promise<HandlerOutcome>,
): Promise<void> {
  const started = performance.now();
  const parent = o.traced ? remoteParent(headers) : untracedContext();
  const { span, context } = startSpan(o.subject, SpanKind.SERVER, parent, {
    'messaging.system': 'nats',
    'messaging.destination.name': o.subject,
    'ccs.service': o.service,
    'ccs.request_id': requestId,
  });
  return withTraceContext(context, () =>
    runInScope({ metrics: o.metrics, requestId }, async () => {
      let outcome: HandlerOutcome = 'internal';
      try {
        outcome = await work();
      } finally {
        const seconds = (performance.now() - started) / 1000;
        o.metrics.handled(o.subject, outcome, seconds);
        endSpan(span, outcome !== 'ok' && isFailureKind(outcome), { 'ccs.outcome': outcome });
        if (o.traced) o.log.debug({ subject: o.subject, outcome, ms: Math.round(seconds * 1000) }, 'request handled');
      }
    }),
  );
}

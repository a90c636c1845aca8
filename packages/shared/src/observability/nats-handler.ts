import type { MsgHdrs } from 'nats';
import type { Logger } from 'pino';
import type { ServiceMetrics } from './metrics.js';
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
 * `ccs_nats_handler_*` by subject and the status `work` replied with.
 */
export function observeHandler(o: EndpointObservation, headers: MsgHdrs | undefined, requestId: string, work: () => Promise<number>): Promise<void> {
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
      let status = 500;
      try {
        status = await work();
      } finally {
        const seconds = (performance.now() - started) / 1000;
        o.metrics.handled(o.subject, status, seconds);
        endSpan(span, status >= 500, { 'ccs.status': status });
        if (o.traced) o.log.debug({ subject: o.subject, status, ms: Math.round(seconds * 1000) }, 'request handled');
      }
    }),
  );
}

import type { Logger } from 'pino';
import { currentScope } from './scope.js';
import { activeTraceIds } from './trace-context.js';

/** Whether a logger already binds `requestId` (Fastify's request loggers do), cached per logger. */
const bindsRequestId = new WeakMap<Logger, boolean>();

function hasRequestIdBinding(logger: Logger): boolean {
  let known = bindsRequestId.get(logger);
  if (known === undefined) {
    known = 'requestId' in logger.bindings();
    bindsRequestId.set(logger, known);
  }
  return known;
}

/**
 * A pino `mixin`: adds `requestId` (from the observability scope) and `traceId`/`spanId` (from
 * the active span) to every line logged while handling a request or message, in every service,
 * without handing a child logger down every call. Fields the line sets itself win; a logger that
 * already binds `requestId` does not get it twice.
 */
export function logCorrelation(_line: object, _level: number, logger: Logger): Record<string, string> {
  const fields: Record<string, string> = {};
  const requestId = currentScope()?.requestId;
  if (requestId && !hasRequestIdBinding(logger)) fields.requestId = requestId;
  const ids = activeTraceIds();
  if (ids) {
    fields.traceId = ids.traceId;
    fields.spanId = ids.spanId;
  }
  return fields;
}

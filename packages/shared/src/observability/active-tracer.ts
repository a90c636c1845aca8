import type { Tracer } from '@opentelemetry/api';

let tracer: Tracer | undefined;

/**
 * The process's tracer while tracing is on (initTracing registered a provider), else undefined:
 * startSpan then makes no span at all. Kept apart from tracing.ts so that what starts spans does
 * not load the tracing SDK.
 */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

/** Set by initTracing once its provider is registered, cleared by its shutdown. */
export function setActiveTracer(t: Tracer | undefined): void {
  tracer = t;
}

import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { z } from 'zod';
import { ConfigError } from '../config/config.js';
import { setActiveTracer } from './active-tracer.js';

/** The standard OTEL_* variables this project reads itself (the SDK reads the rest: OTEL_BSP_*, sampler, headers). */
const TracingEnvSchema = z.object({
  OTEL_SDK_DISABLED: z.string().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.string().optional(),
});

type ExporterName = 'otlp' | 'console';

/**
 * Which exporters the environment asks for. Tracing is OFF unless asked: OTEL_TRACES_EXPORTER
 * names `otlp` and/or `console`, or an OTLP endpoint is set. OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none turn it off whatever else is set.
 */
export function tracesExportersFromEnv(env: Record<string, string | undefined> = process.env): ExporterName[] {
  const parsed = TracingEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`Invalid tracing configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const e = parsed.data;
  if (e.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return [];
  const protocol = e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol === 'grpc') {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: traces are sent as OTLP over HTTP (port 4318); use http/json or http/protobuf.',
    );
  }
  if (e.OTEL_TRACES_EXPORTER === undefined || e.OTEL_TRACES_EXPORTER.trim() === '') {
    return e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? ['otlp'] : [];
  }
  const names = e.OTEL_TRACES_EXPORTER.split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.includes('none')) return [];
  const unknown = names.filter((n) => n !== 'otlp' && n !== 'console');
  if (unknown.length) throw new ConfigError(`OTEL_TRACES_EXPORTER: unsupported exporter(s) ${unknown.join(', ')} (use otlp, console or none).`);
  return [...new Set(names)] as ExporterName[];
}

/** The process's tracing, once initialised. */
export interface Tracing {
  /** True when spans are recorded and exported (or handed to the given processors). */
  enabled: boolean;
  /** Exports what is buffered and stops; call once before the process exits. */
  shutdown(): Promise<void>;
}

let current: Tracing | undefined;

/**
 * Sets up OpenTelemetry tracing for this process, once (later calls return the first setup):
 * a NodeTracerProvider with resource `service.name` = serviceName (OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES override), W3C trace context propagation and AsyncLocalStorage
 * context, exporting through a batch processor to the exporters the OTEL_* variables name.
 * When they name none, nothing is registered: no spans are created and the `traceparent` a
 * request arrives with is passed on unchanged (see CallContext). Tests pass `spanProcessors`
 * (e.g. a SimpleSpanProcessor over an InMemorySpanExporter) to record spans without an exporter.
 */
export function initTracing(serviceName: string, opts: { spanProcessors?: SpanProcessor[]; env?: Record<string, string | undefined> } = {}): Tracing {
  if (current) return current;
  const processors =
    opts.spanProcessors ??
    tracesExportersFromEnv(opts.env).map((name) => new BatchSpanProcessor(name === 'otlp' ? new OTLPTraceExporter() : new ConsoleSpanExporter()));
  if (processors.length === 0) {
    current = { enabled: false, shutdown: async () => undefined };
    return current;
  }
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'collectible-chest-service' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: processors });
  provider.register();
  // Created once: startSpan no longer asks the global provider for it on every call.
  setActiveTracer(trace.getTracer('ccs'));
  current = {
    enabled: true,
    async shutdown() {
      setActiveTracer(undefined);
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      current = undefined;
    },
  };
  return current;
}

/** Flushes and stops the process's tracing if it was initialised (a no-op otherwise). */
export async function shutdownTracing(): Promise<void> {
  await current?.shutdown();
}

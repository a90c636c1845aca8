import { describe, expect, it } from 'vitest';
import { ConfigError, tracesExportersFromEnv } from '../src/index.js';

describe('which trace exporters the OTEL_* variables ask for', () => {
  it('is none by default: tracing is off unless asked for', () => {
    expect(tracesExportersFromEnv({})).toEqual([]);
  });

  it('is OTLP when an OTLP endpoint is set, for all signals or for traces', () => {
    expect(tracesExportersFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual(['otlp']);
    expect(tracesExportersFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toEqual(['otlp']);
  });

  it('is what OTEL_TRACES_EXPORTER names, without duplicates', () => {
    expect(tracesExportersFromEnv({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual(['otlp']);
    expect(tracesExportersFromEnv({ OTEL_TRACES_EXPORTER: ' console , otlp,console' })).toEqual(['console', 'otlp']);
  });

  it('is none when OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever else is set', () => {
    expect(tracesExportersFromEnv({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual([]);
    expect(tracesExportersFromEnv({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' })).toEqual([]);
  });

  it('refuses what it cannot honour with one clear line, instead of silently not tracing', () => {
    expect(() => tracesExportersFromEnv({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(ConfigError);
    expect(() => tracesExportersFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/grpc is not supported/);
    expect(() => tracesExportersFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(ConfigError);
  });
});

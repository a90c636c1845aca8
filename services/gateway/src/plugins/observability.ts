import fp from 'fastify-plugin';
import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { beginHttpRequest, endHttpRequest, runObserved, ServiceMetrics, type HttpObservation } from '@ccs/shared';

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's Prometheus metrics (served at GET /metrics). */
    metrics: ServiceMetrics;
  }
  interface FastifyRequest {
    observation?: HttpObservation;
  }
}

/**
 * Fastify's log lines for the gateway: the request id under `requestId`, the key every service
 * uses, and no per-request lines of Fastify's own (they are written outside the request's trace;
 * the plugin below logs one line per request inside it).
 */
export function observabilityLogController(): LogController {
  return new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true });
}

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };
const levelAware = (log: FastifyBaseLogger): log is LevelAware => typeof (log as Partial<LevelAware>).isLevelEnabled === 'function';

/**
 * A request's logger that becomes pino's child (bound to the request id) on the first line it
 * writes: most requests write none below `info`, and a pino child costs its bindings' serialization
 * (through the redaction paths) and a rebuild of its level methods. Lines, bindings and levels are
 * those of the child it stands for.
 */
class LazyRequestLogger {
  private real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: LevelAware,
    private readonly bindings: Bindings,
  ) {}

  private logger(): FastifyBaseLogger {
    return (this.real ??= this.parent.child(this.bindings));
  }

  private write(level: LevelName, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    const log = this.logger();
    (log[level] as (...a: unknown[]) => void).apply(log, args);
  }

  get level(): string {
    return (this.real ?? this.parent).level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  isLevelEnabled(level: string): boolean {
    const log = this.real ?? this.parent;
    return levelAware(log) ? log.isLevelEnabled(level) : true;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}

/**
 * Fastify's request loggers for the gateway: lazy pino children (see LazyRequestLogger). A route
 * with its own log level or serializers, or a logger that is not pino, gets its child at once.
 */
export const lazyRequestLoggers: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, opts) => {
  if (!levelAware(logger) || Object.keys(opts).length > 0) return logger.child(bindings, opts);
  return new LazyRequestLogger(logger, bindings) as unknown as FastifyBaseLogger;
};

/** Whether a request logger writes lines of that level (pino says; a logger that cannot tell is asked to). */
const logsAt = (log: FastifyBaseLogger, level: RequestLogLevel): boolean => !levelAware(log) || log.isLevelEnabled(level);

/** The level of the one line per request (the gateway's LOG_REQUESTS, see config.ts). */
export type RequestLogLevel = 'info' | 'debug';

/** Probes and scrapes: counted, but neither traced nor logged per request (they come every few seconds). */
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Metrics, tracing and log correlation for every request, and GET /metrics:
 * - onRequest starts a SERVER span continuing an incoming `traceparent` and enters the scope in
 *   which log lines carry the request id and trace id and NATS calls carry the trace;
 * - preValidation enters it again, because body parsing runs outside it (stream callbacks);
 * - onResponse counts the request by route pattern (never the raw URL), method and status, ends
 *   the span and logs one line per request at `requestLogLevel` (`info` unless told otherwise;
 *   Fastify's own request logging is off).
 */
export default fp(
  async function observability(
    app: FastifyInstance,
    opts: { metrics?: ServiceMetrics; serveMetrics?: boolean; requestLogLevel?: RequestLogLevel } = {},
  ) {
    const requestLogLevel = opts.requestLogLevel ?? 'info';
    const metrics = opts.metrics ?? new ServiceMetrics('gateway');
    app.decorate('metrics', metrics);
    app.decorateRequest('observation', undefined);

    app.addHook('onRequest', (request, _reply, done) => {
      const route = request.routeOptions.url;
      const o = beginHttpRequest(metrics, {
        method: request.method,
        route,
        path: request.url.split('?')[0]!,
        requestId: request.id,
        headers: request.headers,
        traced: !(route && QUIET_ROUTES.has(route)),
      });
      request.observation = o;
      runObserved(o, done);
    });
    app.addHook('preValidation', (request, _reply, done) => (request.observation ? runObserved(request.observation, done) : done()));
    app.addHook('onResponse', (request, reply, done) => {
      const o = request.observation;
      if (!o) return done();
      const ms = endHttpRequest(o, reply.statusCode);
      // Below the line's level (LOG_LEVEL=warn, or info for debug lines) it would be dropped: skip
      // building it and re-entering the scope.
      if (!QUIET_ROUTES.has(o.route) && logsAt(request.log, requestLogLevel)) {
        // Written by the app's logger with the request id as a field: the same line the request's
        // child would write (its binding sits in the same place), without making that child.
        runObserved(o, () =>
          app.log[requestLogLevel](
            { requestId: request.id, method: o.method, route: o.route, url: request.url, statusCode: reply.statusCode, ms: Math.round(ms) },
            'request completed',
          ),
        );
      }
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      if (request.observation) endHttpRequest(request.observation, 499);
      done();
    });

    // Off when METRICS_PORT gives /metrics its own listener (see server.ts).
    if (opts.serveMetrics !== false) {
      app.get('/metrics', async (_request, reply) => {
        const m = await metrics.render();
        return reply.type(m.contentType).send(m.body);
      });
    }
  },
  { name: 'observability' },
);

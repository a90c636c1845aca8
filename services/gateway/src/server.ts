import { connect } from 'nats';
import { Redis } from 'ioredis';
import { Bus, createLogger, describeInfraError, initTracing, InfraError, NATS_LIVENESS, natsAuthOptions, type Logger } from '@ccs/shared';
import type { FastifyInstance } from 'fastify';
import { createServer, type Server } from 'node:http';
import { buildApp } from './app.js';
import type { GatewayConfig } from './config.js';

/** A listening gateway and how to close it. */
export interface RunningGateway {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** Connects NATS and Redis, builds the app and listens; `close` finishes in-flight requests first. */
export async function startGateway(config: GatewayConfig, logger?: Logger): Promise<RunningGateway> {
  const log = logger ?? createLogger('gateway', config.LOG_LEVEL);
  // Before anything makes a span: OFF unless the OTEL_* variables ask for it (a no-op when set up already).
  initTracing('gateway');
  // noAsyncTraces: nats.js' request otherwise creates an Error (a stack capture) per call, and a
  // second one for its timeout, only to append the caller's stack to a failure. The Bus sends its
  // calls through its own muxed inbox (ReplyInbox in bus.ts) and turns every failure into an
  // AppError naming the subject; this keeps anything else that calls nc.request (none today)
  // equally cheap. nats.js' request uses the connection's one muxed inbox too (never noMux).
  const nc = await connect({
    ...natsAuthOptions(config),
    servers: config.NATS_URL,
    name: `${config.NATS_PREFIX}gateway`,
    maxReconnectAttempts: -1,
    noAsyncTraces: true,
    ...NATS_LIVENESS,
  }).catch((err) => {
    throw new InfraError(describeInfraError('NATS', config.NATS_URL, err));
  });
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000, enableOfflineQueue: true });
  await redis.connect().catch(async (err) => {
    await nc.close();
    redis.disconnect();
    throw new InfraError(describeInfraError('Redis', config.REDIS_URL, err));
  });
  redis.on('error', (err) => log.warn({ err: String(err) }, 'redis error'));
  const bus = new Bus(nc, config.NATS_PREFIX, config.NATS_REQUEST_TIMEOUT_MS, { readTimeoutMs: config.NATS_READ_TIMEOUT_MS });
  const app = await buildApp({ config, bus, redis, logger: log });
  const url = await app.listen({ port: config.PORT, host: config.HOST });
  const metricsServer = config.METRICS_PORT ? await listenMetrics(app, config.HOST, config.METRICS_PORT) : undefined;
  log.info({ url, metricsPort: config.METRICS_PORT || config.PORT }, 'gateway listening');
  return {
    app,
    url: url.replace('0.0.0.0', '127.0.0.1'),
    async close() {
      // 1. Stop accepting connections; idle keep-alive connections close, requests in flight
      //    finish (their NATS calls still work), and a request arriving meanwhile on a busy
      //    connection gets 503 with `Connection: close` (so /readyz is 503 from now on). A
      //    connection whose request finishes during the close turns idle but would stay open for
      //    Fastify's keepAliveTimeout (72 s), holding the close: reap idle connections meanwhile.
      const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(reaper);
      }
      metricsServer?.close();
      // 2. Then flush and close NATS: nothing is waiting for a reply any more.
      await nc.drain().catch(() => undefined);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** GET /metrics on its own port (METRICS_PORT), so an ingress in front of PORT never exposes it. */
function listenMetrics(app: FastifyInstance, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') return void res.writeHead(404).end();
    app.metrics.render().then(
      (m) => res.writeHead(200, { 'content-type': m.contentType }).end(m.body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

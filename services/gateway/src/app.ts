import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import qs from 'qs';
import type { Logger } from 'pino';
import { AppError, JSONAPI_MEDIA_TYPE, type Bus } from '@ccs/shared';
import { errorDocument, HttpError, httpStatusOf } from './http-errors.js';
import { requestLogLevel, type GatewayConfig } from './config.js';
import { genRequestId } from './lib/http.js';
import errors from './plugins/errors.js';
import observability, { lazyRequestLoggers, observabilityLogController } from './plugins/observability.js';
import negotiation from './plugins/negotiation.js';
import tenancy from './plugins/tenancy.js';
import auth from './plugins/auth.js';
import rateLimiting from './plugins/rate-limit.js';
import replyCache from './plugins/reply-cache.js';
import purchaseFlags from './plugins/purchase-flags.js';
import healthRoutes from './routes/health.js';
import apiDocs from './routes/docs.js';
import v1Routes from './routes/v1/index.js';
import { consoleRoutes } from './console/index.js';
import { createHash, randomBytes } from 'node:crypto';

/** What the gateway needs from outside: its config, the NATS bus and Redis. */
export interface GatewayDeps {
  config: GatewayConfig;
  bus: Bus;
  redis: Redis;
  logger?: Logger;
}

declare module 'fastify' {
  interface FastifyInstance {
    bus: Bus;
    gatewayConfig: GatewayConfig;
  }
}

/**
 * Failures inside the router (bad URL encoding, an overlong path parameter) happen before the
 * errors plugin's context exists; they are rendered as JSON:API error documents here.
 */
function routerError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // No hook runs for these answers: the request id the onSend hook adds is set here.
  reply.header('x-request-id', request.id);
  const e =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new HttpError(414, 'uri_too_long', 'URI Too Long', 'A path segment of the URL is too long.')
      : AppError.badRequest('bad_url', 'The request URL is malformed.');
  void reply.code(httpStatusOf(e)).type(JSONAPI_MEDIA_TYPE).send(errorDocument(e));
}

/** Whether a query-string member's name mentions `__proto__` anywhere (`__proto__[x]`, `filter[__proto__]`). */
function namesProto(part: string): boolean {
  const name = part.split('=')[0]!.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name).includes('__proto__');
  } catch {
    return name.includes('__proto__');
  }
}

/**
 * The query string as nested objects (qs). Members named like Object.prototype's are refused like
 * any unknown parameter instead of being dropped silently: `plainObjects` keeps `constructor` or
 * `hasOwnProperty` as plain keys, and a `__proto__` member (which qs always drops) is recorded
 * as a plain `__proto__` key of the (prototype-less) result.
 */
function parseQueryString(s: string): Record<string, unknown> {
  const query = qs.parse(s, { depth: 8, arrayLimit: 20, parameterLimit: 200, plainObjects: true }) as Record<string, unknown>;
  // A member's name can only decode to one containing `__proto__` if the text says `proto` or escapes something.
  if ((s.includes('proto') || s.includes('%')) && s.split('&').some(namesProto)) {
    Object.defineProperty(query, '__proto__', { value: '', enumerable: true });
  }
  return query;
}

/** Builds the gateway app (no port); the server and the tests share it. */
export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = createFastify(deps);
  // Every payload the gateway sends is built from input its routes validated (path, query and body,
  // against bounds at least as tight as the contracts'), and every service parses what arrives:
  // the Bus's own parse of each request would be a third check (see "Where payloads are validated"
  // in packages/shared/src/runtime/bus.ts).
  const bus = deps.bus.withOptions({ validateRequests: false });
  app.decorate('bus', bus);
  app.decorate('gatewayConfig', deps.config);
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  await registerPlugins(app, deps, bus);
  await app.register(v1Routes);
  await registerConsole(app, deps);
  return app;
}

/** The Fastify instance with the gateway's logger, request ids, limits and router options. */
function createFastify(deps: GatewayDeps): FastifyInstance {
  // Fastify types the instance with pino's Logger when given one; every plugin takes the default
  // FastifyInstance, whose logger interface pino satisfies, hence the one cast below.
  return Fastify({
    loggerInstance: deps.logger,
    genReqId: genRequestId,
    requestIdHeader: false,
    logController: observabilityLogController(),
    childLoggerFactory: lazyRequestLoggers,
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    trustProxy: deps.config.TRUST_PROXY,
    frameworkErrors: routerError,
    routerOptions: {
      // Long enough for any id a handler judges itself (404/400); beyond it, routerError's 414.
      maxParamLength: 500,
      querystringParser: parseQueryString,
      ignoreTrailingSlash: true,
    },
  }) as unknown as FastifyInstance;
}

/** The plugins every route runs behind, in order (errors, observability, negotiation, tenancy, auth, caches, limits, docs, health). */
async function registerPlugins(app: FastifyInstance, deps: GatewayDeps, bus: FastifyInstance['bus']): Promise<void> {
  // The error handler before any route: a route keeps the handler set when it was registered
  // (observability's /metrics too). It adds no hooks, so observability's still run first.
  await app.register(errors);
  // First hooks: they wrap every other plugin's in the request's trace.
  await app.register(observability, { serveMetrics: deps.config.METRICS_PORT === 0, requestLogLevel: requestLogLevel(deps.config) });
  await app.register(negotiation);
  await app.register(tenancy, { bus, ttlMs: deps.config.APIKEY_CACHE_TTL_MS });
  await app.register(auth, { bus, issuer: deps.config.JWT_ISSUER, audience: deps.config.JWT_AUDIENCE, locksTtlMs: deps.config.PLAYER_LOCKS_TTL_MS });
  await app.register(replyCache, { bus, ttlMs: deps.config.REPLY_CACHE_TTL_MS });
  await app.register(purchaseFlags, { bus, ttlMs: deps.config.PURCHASE_FLAGS_TTL_MS });
  if (deps.config.RATE_LIMIT === 'on') {
    await app.register(rateLimiting, {
      redis: deps.redis,
      prefix: deps.config.REDIS_PREFIX,
      perMinute: deps.config.RATE_LIMIT_PER_MINUTE,
      authPerMinute: deps.config.RATE_LIMIT_AUTH_PER_MINUTE,
    });
  }
  // Before every route it documents: it collects them as they are registered.
  await app.register(apiDocs, { publicBaseUrl: deps.config.PUBLIC_BASE_URL });
  await app.register(healthRoutes, { bus, redis: deps.redis, timeoutMs: deps.config.READY_TIMEOUT_MS });
}

/** The studio console (docs/console.md): HTML pages over the admin API, signed in with a secret key. */
async function registerConsole(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  if (!deps.config.CONSOLE_SESSION_KEY)
    app.log.warn('CONSOLE_SESSION_KEY is unset: console sessions use a key of this process (they end at a restart and hold on one replica only)');
  await app.register(consoleRoutes, {
    prefix: '/console',
    redis: deps.redis,
    redisPrefix: deps.config.REDIS_PREFIX,
    signInFailuresPerMinute: deps.config.CONSOLE_SIGNIN_FAILURES_PER_MINUTE,
    sessionKey: deps.config.CONSOLE_SESSION_KEY ? createHash('sha256').update(deps.config.CONSOLE_SESSION_KEY).digest() : randomBytes(32),
    sessionSeconds: deps.config.CONSOLE_SESSION_HOURS * 3600,
  });
}

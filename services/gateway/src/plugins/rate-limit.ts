import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '@ccs/shared';
import { scopeOf } from './scopes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks login, registration, refresh and guest creation for the tighter limit. */
    authLimited?: boolean;
  }
}

/**
 * Per-minute limits stored in Redis (shared by every gateway replica): per app and player, or per
 * app and address for anonymous calls; tighter on the credential endpoints. 429 with Retry-After.
 */
export default fp(
  async function rateLimiting(app: FastifyInstance, opts: { redis: Redis; prefix: string; perMinute: number; authPerMinute: number }) {
    await app.register(rateLimit, {
      global: true,
      hook: 'preHandler',
      redis: opts.redis,
      nameSpace: `${opts.prefix}ratelimit:`,
      timeWindow: 60_000,
      skipOnError: true,
      max: (request) => (request.routeOptions.config.authLimited ? opts.authPerMinute : opts.perMinute),
      keyGenerator: (request) => {
        const app = request.tenant?.appId ?? 'none';
        const who = request.routeOptions.config.authLimited || !request.player ? `ip:${request.ip}` : `player:${request.player.id}`;
        return `${request.routeOptions.config.authLimited ? 'auth' : 'api'}:${app}:${who}`;
      },
      allowList: (request) => scopeOf(request.routeOptions) === 'public',
      errorResponseBuilder: (_request, context) => {
        return AppError.rateLimited('rate_limited', `Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`);
      },
    });
  },
  { name: 'rate-limit', dependencies: ['tenancy', 'auth'] },
);

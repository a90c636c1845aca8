import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { BlockList, isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '@ccs/shared';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks login, registration, refresh and guest creation for the tighter limit. */
    authLimited?: boolean;
  }
}

// Peers whose X-Forwarded-For we believe: loopback and private networks, where a load balancer
// or ingress in front of the gateway lives.
const PROXY_NETWORKS = new BlockList();
for (const [net, bits] of [['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16]] as const) {
  PROXY_NETWORKS.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [['::1', 128], ['fc00::', 7], ['fe80::', 10]] as const) PROXY_NETWORKS.addSubnet(net, bits, 'ipv6');

function isProxy(address: string): boolean {
  const plain = address.replace(/^::ffff:(?=\d+\.)/i, '');
  const family = isIP(plain);
  return family !== 0 && PROXY_NETWORKS.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The address a limit counts: the peer itself, or, when the peer is one of our proxies, the
 * nearest X-Forwarded-For hop that is not. Hops further left are whatever the client claimed, so
 * a client cannot escape its limit by sending a new X-Forwarded-For on every request (which
 * `request.ip` under `trustProxy: true` would let it do).
 */
export function clientAddress(request: FastifyRequest): string {
  let address = request.socket.remoteAddress ?? request.ip;
  if (!isProxy(address)) return address;
  const header = request.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    address = hops[i]!.slice(0, 64);
    if (!isProxy(address)) return address;
  }
  return address;
}

/**
 * Per-minute limits stored in Redis (shared by every gateway replica): per app and player, or per
 * app and address for anonymous calls; tighter on the credential endpoints. 429 with Retry-After.
 */
export default fp(
  async function rateLimiting(
    app: FastifyInstance,
    opts: { redis: Redis; prefix: string; perMinute: number; authPerMinute: number },
  ) {
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
        const who = request.routeOptions.config.authLimited || !request.player ? `ip:${clientAddress(request)}` : `player:${request.player.id}`;
        return `${request.routeOptions.config.authLimited ? 'auth' : 'api'}:${app}:${who}`;
      },
      allowList: (request) => !request.url.startsWith('/api/') && !request.routeOptions.config.tenantScoped,
      errorResponseBuilder: (_request, context) => {
        const err = new AppError({
          status: 429,
          code: 'rate_limited',
          title: 'Too Many Requests',
          detail: `Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`,
        });
        return err;
      },
    });
  },
  { name: 'rate-limit', dependencies: ['tenancy', 'auth'] },
);

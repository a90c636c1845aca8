import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { healthSubject, type Bus } from '@ccs/shared';

export const BACKEND_SERVICES = ['players', 'chests', 'collections', 'wallet'] as const;

/** Liveness (the process answers) and readiness (every service answers over NATS, Redis too). */
export default async function healthRoutes(app: FastifyInstance, opts: { bus: Bus; redis: Redis; timeoutMs: number }) {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    const checks: Record<string, boolean> = {};
    await Promise.all([
      ...BACKEND_SERVICES.map(async (name) => {
        checks[name] = await opts.bus
          .request(healthSubject(name), {}, { requestId: request.id }, { timeoutMs: opts.timeoutMs })
          .then((r) => r.ok)
          .catch(() => false);
      }),
      (async () => {
        checks.redis = await Promise.race([
          opts.redis.ping().then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((r) => setTimeout(() => r(false), opts.timeoutMs)),
        ]);
      })(),
    ]);
    const ready = Object.values(checks).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
}

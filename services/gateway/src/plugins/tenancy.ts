import fp from 'fastify-plugin';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { ApiKeysChanged, AppError, ResolveApiKey, type Bus } from '@ccs/shared';
import { gatewayErrors } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The app (tenant) named by the request's apikey; set on every route of the app and player scopes. */
    tenant?: { appId: string; keyKind: 'publishable' | 'secret' };
  }
  interface FastifyInstance {
    /** onRequest hook of the app and player scopes (plugins/scopes.ts): the apikey → request.tenant, else 401. */
    requireTenant: onRequestHookHandler;
  }
}

interface CacheEntry {
  value: { appId: string; keyKind: 'publishable' | 'secret' } | null;
  expires: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Provides `requireTenant`, the hook that resolves the `apikey` header to an app (401 when
 * missing or unknown); the scopes that need an app add it (plugins/scopes.ts), so a route is
 * protected by where it is registered. Answers are cached in memory for a short TTL, unknown keys
 * too, so a flood of bad keys does not reach the players service; rotated keys stop working
 * within the TTL.
 */
export default fp(
  async function tenancy(app: FastifyInstance, opts: { bus: Bus; ttlMs: number }) {
    const cache = new Map<string, CacheEntry>();
    // A rotation with immediate revocation is announced: forget that app's keys now.
    const stopListening = opts.bus.listen(ApiKeysChanged, ({ appId }) => {
      for (const [key, entry] of cache) if (entry.value?.appId === appId) cache.delete(key);
    });
    app.addHook('onClose', async () => stopListening());

    /** The cached answer for a key (null: known to be unknown), or undefined when it must be asked. */
    function cached(apiKey: string): CacheEntry['value'] | undefined {
      const hit = cache.get(apiKey);
      return hit && hit.expires > Date.now() ? hit.value : undefined;
    }

    async function resolve(apiKey: string, requestId: string) {
      let value: CacheEntry['value'];
      try {
        value = await opts.bus.request(ResolveApiKey, { apiKey }, { requestId });
      } catch (err) {
        if (err instanceof AppError && err.kind === 'not_found') value = null;
        else throw err;
      }
      if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
      cache.set(apiKey, { value, expires: Date.now() + (value ? opts.ttlMs : Math.min(opts.ttlMs, 5000)) });
      return value;
    }

    const invalidKey = gatewayErrors.invalidApiKey;

    app.decorateRequest('tenant', undefined);
    // Callback style: a cached key (the common case) costs no promise.
    const requireTenant: onRequestHookHandler = (request, _reply, done) => {
      const key = request.headers.apikey;
      if (typeof key !== 'string' || key.length === 0) {
        return done(gatewayErrors.missingApiKey());
      }
      if (key.length > 200) return done(invalidKey());
      const hit = cached(key);
      if (hit !== undefined) {
        if (!hit) return done(invalidKey());
        request.tenant = hit;
        return done();
      }
      resolve(key, request.id).then((tenant) => {
        if (!tenant) return done(invalidKey());
        request.tenant = tenant;
        done();
      }, done);
    };
    app.decorate('requireTenant', requireTenant);
  },
  { name: 'tenancy', dependencies: ['errors'] },
);

import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ApiKeysChanged, AppError, ResolveApiKey, type Bus } from '@ccs/shared';
import { needsApiKey } from '../lib/http.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The app (tenant) named by the request's apikey. */
    tenant?: { appId: string; keyKind: 'publishable' | 'secret' };
  }
}

interface CacheEntry {
  value: { appId: string; keyKind: 'publishable' | 'secret' } | null;
  expires: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Resolves the `apikey` header to an app on every /api request (401 when missing or unknown).
 * Answers are cached in memory for a short TTL, unknown keys too, so a flood of bad keys does not
 * reach the players service; rotated keys stop working within the TTL.
 */
export default fp(
  async function tenancy(app: FastifyInstance, opts: { bus: Bus; ttlMs: number }) {
    const cache = new Map<string, CacheEntry>();
    // A rotation with immediate revocation is announced: forget that app's keys now.
    const stopListening = opts.bus.listen(ApiKeysChanged, ({ appId }) => {
      for (const [key, entry] of cache) if (entry.value?.appId === appId) cache.delete(key);
    });
    app.addHook('onClose', async () => stopListening());

    async function resolve(apiKey: string, requestId: string) {
      const hit = cache.get(apiKey);
      if (hit && hit.expires > Date.now()) return hit.value;
      let value: CacheEntry['value'];
      try {
        value = await opts.bus.request(ResolveApiKey, { apiKey }, { requestId });
      } catch (err) {
        if (err instanceof AppError && err.status === 404) value = null;
        else throw err;
      }
      if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
      cache.set(apiKey, { value, expires: Date.now() + (value ? opts.ttlMs : Math.min(opts.ttlMs, 5000)) });
      return value;
    }

    app.decorateRequest('tenant', undefined);
    app.addHook('onRequest', async (request) => {
      if (!needsApiKey(request)) return;
      // Public documents under /api (the OpenAPI document) are readable without a key.
      if (request.routeOptions.config.noApiKey) return;
      const key = request.headers.apikey;
      if (typeof key !== 'string' || key.length === 0) {
        throw AppError.unauthorized('missing_api_key', 'Send your app key in the apikey header.');
      }
      if (key.length > 200) throw AppError.unauthorized('invalid_api_key', 'The apikey is not valid.');
      const tenant = await resolve(key, request.id);
      if (!tenant) throw AppError.unauthorized('invalid_api_key', 'The apikey is not valid.');
      request.tenant = tenant;
    });
  },
  { name: 'tenancy', dependencies: ['errors'] },
);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes outside /api that still need an apikey (the unprefixed aliases). */
    tenantScoped?: boolean;
    /** Routes under /api that need no apikey (the OpenAPI document). */
    noApiKey?: boolean;
  }
}

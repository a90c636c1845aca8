import type { FastifyContextConfig, FastifyInstance } from 'fastify';

/** A route as registered: method, URL pattern and its config (where its documentation sits). */
export interface CollectedRoute {
  method: string;
  url: string;
  config: FastifyContextConfig;
}

/**
 * Records every route registered after this call, in this context and its children (register it
 * at the root before the routes). The list fills as routes are added; read it once the app is ready.
 */
export function collectRoutes(app: FastifyInstance): CollectedRoute[] {
  const routes: CollectedRoute[] = [];
  app.addHook('onRoute', (route) => {
    // The config is read when the document is built: a scope tags its routes after this hook ran.
    for (const method of [route.method].flat()) {
      routes.push({
        method,
        url: route.url,
        get config() {
          return route.config ?? {};
        },
      });
    }
  });
  return routes;
}

/**
 * Adds the routes among `keys` (`METHOD /path`) that the app has but the collector did not see
 * because they were registered before it (e.g. the observability plugin's /metrics).
 */
export function withEarlierRoutes(app: FastifyInstance, routes: CollectedRoute[], keys: string[]): CollectedRoute[] {
  const earlier = keys
    .map((key) => key.split(' ') as [string, string])
    .filter(([method, url]) => !routes.some((r) => r.method === method && r.url === url))
    .filter(([method, url]) => app.hasRoute({ method: method as 'GET', url }))
    .map(([method, url]) => ({ method, url, config: {} }));
  return [...earlier, ...routes];
}

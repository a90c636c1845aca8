import type { FastifyInstance, FastifyPluginAsync, RouteOptions } from 'fastify';
import { gatewayErrors } from '../errors.js';

/**
 * Who may call a route (docs/architecture.md, "Gateway"): `public` (anyone: health, the API
 * documents), `app` (the app's `apikey`; a Bearer token is optional and verified when sent),
 * `player` (the apikey and a player's Bearer token) or `studio` (the app's SECRET key and no
 * Bearer token: the admin API of the studio's own tools). A route's scope is where it is registered:
 * the scope's encapsulated plugin adds the checks as onRequest hooks and tags its routes, so no
 * handler has to remember a check and no path is matched against a prefix.
 */
export type RouteScope = 'public' | 'app' | 'player' | 'studio';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by the scope a route is registered in (plugins/scopes.ts); absent: public. */
    scope?: RouteScope;
  }
}

/** The scope of a registered route (absent: registered outside the scopes, so public). */
export const scopeOf = (route: Pick<RouteOptions, 'config'>): RouteScope => (route.config as { scope?: RouteScope } | undefined)?.scope ?? 'public';

/** Tags every route registered in `app` (and its children, unless they tag again) with `scope`. */
function tag(app: FastifyInstance, scope: RouteScope): void {
  app.addHook('onRoute', (route) => {
    route.config = Object.assign(route.config ?? {}, { scope });
  });
}

/** The routes of each scope that needs credentials. */
export interface ScopedRoutes {
  /** Need the apikey; a Bearer token is optional (verified when sent). */
  app: FastifyPluginAsync[];
  /** Need the apikey and a player's Bearer token. */
  player: FastifyPluginAsync[];
  /** Need the app's secret key, and no Bearer token. */
  studio?: FastifyPluginAsync[];
}

/**
 * Registers the app and player scopes: an encapsulated plugin whose hooks resolve the apikey
 * (`requireTenant`) and verify a Bearer token when one is sent (`verifyToken`), and inside it
 * another that also requires the player (`requirePlayer`).
 */
export async function credentialScopes(app: FastifyInstance, routes: ScopedRoutes): Promise<void> {
  await app.register(async (appScope) => {
    tag(appScope, 'app');
    appScope.addHook('onRequest', appScope.requireTenant);
    appScope.addHook('onRequest', appScope.verifyToken);
    for (const r of routes.app) await appScope.register(r);
    await appScope.register(async (playerScope) => {
      tag(playerScope, 'player');
      playerScope.addHook('onRequest', playerScope.requirePlayer);
      for (const r of routes.player) await playerScope.register(r);
    });
  });
  await app.register(async (studioScope) => {
    tag(studioScope, 'studio');
    studioScope.addHook('onRequest', studioScope.requireTenant);
    studioScope.addHook('onRequest', (request, _reply, done) => {
      if (request.headers.authorization !== undefined) {
        return done(gatewayErrors.tokenNotAccepted());
      }
      if (request.tenant?.keyKind !== 'secret') {
        return done(gatewayErrors.secretKeyRequired());
      }
      done();
    });
    for (const r of routes.studio ?? []) await studioScope.register(r);
  });
}

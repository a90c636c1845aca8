import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack } from '../../../test/support/stack.js';
import { OpenApiDocumentSchema, type OpenApiDocument } from './support/openapi-document.js';

/**
 * Every route of the gateway is protected by the scope it is registered in (plugins/scopes.ts).
 * A new route lands in one of them or is public on purpose: the public list below is the whole
 * of it, the reference documents each scope's credentials, and each scope's checks really run.
 */
const PUBLIC = [
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'GET /api/v1/openapi.json',
  'GET /docs',
  'GET /docs/json',
  'GET /docs/yaml',
  'GET /docs/static/*',
  'GET /docs/static/index.html',
  'GET /docs/static/swagger-initializer.js',
  // The stores' notifications (docs/store.md): Apple and Google send no apikey; the path names the
  // app and the store service verifies Apple's signature or Google's OIDC token.
  'POST /api/v1/stores/apple/notifications/:app_id',
  'POST /api/v1/stores/google/notifications/:app_id',
  // The studio console (docs/console.md): HTML pages, not the API. Their own guard is the session
  // (signed in with the app's secret key, which each page then sends to the admin API, studio scope).
  'GET /console',
  'GET /console/assets/:name',
  'GET /console/sign-in',
  'POST /console/sign-in',
  'POST /console/sign-out',
  'GET /console/players',
  'POST /console/players/search',
  'GET /console/players/search',
  'GET /console/players/:id',
  'POST /console/players/:id/actions/:action',
  'GET /console/chests',
  'GET /console/chests/:id',
  'GET /console/odds-log',
  'GET /console/banners',
  'GET /console/banners/:id',
  'GET /console/store',
  'POST /console/chests/:id/simulation',
  'GET /console/content',
  'POST /console/content',
  'GET /console/content/:version/diff',
  'GET /console/audit',
  'GET /console/webhooks',
  'POST /console/webhooks',
  'GET /console/webhooks/:id',
  'POST /console/webhooks/:id/:action',
  'POST /console/webhooks/:id/deliveries/:delivery/retry',
];

describe('route scopes', () => {
  let stack: TestStack;
  let doc: OpenApiDocument;
  let routes: { method: string; url: string; scope: string }[];
  beforeAll(async () => {
    stack = await startStack();
    doc = OpenApiDocumentSchema.parse((await stack.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json());
    routes = stack.app.routeScopes().filter((r) => r.method !== 'HEAD');
  });
  afterAll(async () => stack?.close());

  const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;
  /** The path of a route with every parameter filled in. */
  const concrete = (url: string) => url.replace(/:[a-z_]+/g, randomUUID()).replace('*', 'x');
  /** The OpenAPI path of a route (`:id` → `{id}`). */
  const documentedAs = (url: string) => url.replace(/:([a-z_]+)/g, '{$1}');

  it('registers every route in a scope; the public ones are exactly the known list', () => {
    expect(routes.length).toBeGreaterThan(40);
    for (const r of routes) expect(['public', 'app', 'player', 'studio'], key(r)).toContain(r.scope);
    const publicRoutes = routes.filter((r) => r.scope === 'public').map(key);
    expect(
      publicRoutes.filter((k) => !PUBLIC.includes(k)),
      'public routes not in the list',
    ).toEqual([]);
  });

  it('documents the credentials of each scope: player routes require a token, app routes take one optionally or not at all', () => {
    for (const r of routes.filter((x) => x.scope !== 'public')) {
      const op = doc.paths[documentedAs(r.url)]?.[r.method.toLowerCase() as 'get'];
      expect(op, `${key(r)} is documented`).toBeDefined();
      const schemes = op!.security!.map((s) => Object.keys(s).sort().join('+'));
      if (r.scope === 'player') expect(schemes, key(r)).toEqual(['apikey+bearerAuth']);
      else if (r.scope === 'studio') expect(schemes, key(r)).toEqual(['apikey']);
      else expect(schemes, key(r)).toContain('apikey');
    }
  });

  it('runs the checks of the scope on every route: no apikey → 401; player routes without a token → 401; studio routes with a publishable key → 403', async () => {
    for (const r of routes.filter((x) => x.scope !== 'public')) {
      const url = concrete(r.url);
      const method = r.method as 'GET';
      const noKey = await stack.inject({ method, url });
      expect([noKey.statusCode, noKey.json().errors?.[0]?.code], key(r)).toEqual([401, 'missing_api_key']);
      const noToken = await stack.inject({ method, url, headers: { apikey: stack.apiKey } });
      if (r.scope === 'player') expect([noToken.statusCode, noToken.json().errors?.[0]?.code], key(r)).toEqual([401, 'missing_token']);
      // The studio scope (the admin API) takes the app's secret key only.
      else if (r.scope === 'studio') expect([noToken.statusCode, noToken.json().errors?.[0]?.code], key(r)).toEqual([403, 'secret_key_required']);
      else expect(noToken.statusCode, `${key(r)}: ${noToken.body.slice(0, 200)}`).not.toBe(401);
    }
  });

  it('answers public routes without any credentials', async () => {
    for (const url of ['/healthz', '/api/v1/openapi.json', '/docs']) expect((await stack.inject({ method: 'GET', url })).statusCode, url).toBe(200);
  });
});

import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../openapi/document.js';
import { INFRASTRUCTURE_DOCS, openApiDocumentDoc } from '../openapi/operations/infrastructure.js';
import { collectRoutes, withEarlierRoutes } from '../openapi/route-collector.js';
import { scopeOf, type RouteScope } from '../plugins/scopes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route with the scope it is registered in (plugins/scopes.ts), as the reference documents them. */
    routeScopes(): { method: string; url: string; scope: RouteScope }[];
  }
}

/**
 * The API reference: the OpenAPI 3.1 document at GET /api/v1/openapi.json (no apikey needed) and
 * a browsable page at /docs (Swagger UI, served from the package's own files: works offline).
 * Register it before the routes it documents: it collects them as they are added and builds the
 * document once the app is ready.
 */
export default fp(
  async function apiDocs(app: FastifyInstance, opts: { publicBaseUrl?: string }) {
    const routes = collectRoutes(app);
    // @fastify/swagger (static mode) keeps this object by reference: it is filled on ready, when
    // every route is known, and the UI's /docs/json then serves the same document.
    const document = { openapi: '3.1.1', info: { title: 'Collectible Chest Service API', version: '' }, paths: {} };
    let json = '';
    app.addHook('onReady', async () => {
      Object.assign(document, buildOpenApiDocument(withEarlierRoutes(app, routes, Object.keys(INFRASTRUCTURE_DOCS)), opts));
      json = JSON.stringify(document);
    });

    app.decorate('routeScopes', () =>
      withEarlierRoutes(app, routes, Object.keys(INFRASTRUCTURE_DOCS)).map((r) => ({ method: r.method, url: r.url, scope: scopeOf(r) })),
    );

    app.get('/api/v1/openapi.json', { config: { openapi: openApiDocumentDoc } }, async (_request, reply) =>
      reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(json),
    );

    await app.register(swagger, { mode: 'static', specification: { document } });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0, tryItOutEnabled: false },
      theme: { title: 'Collectible Chest Service API' },
    });
  },
  { name: 'api-docs', dependencies: ['errors'] },
);

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { scopeOf } from '../plugins/scopes.js';
import { componentSchemas, inputSchema, responseSchema } from './components.js';
import { errorResponses, HEADER_COMPONENTS, REQUEST_ID_HEADER, type RouteFacts } from './error-responses.js';
import { INFRASTRUCTURE_DOCS } from './operations/infrastructure.js';
import { queryParameters, type Parameter } from './query-parameters.js';
import { TAGS, type MediaType, type RouteDoc } from './route-doc.js';
import type { CollectedRoute } from './route-collector.js';
import { API_DESCRIPTION } from './description.js';

/**
 * The API's version as the document states it (`info.version`): the gateway package's own
 * (services/gateway/package.json, two levels up from this module in src/ and in dist/ alike), so a
 * release's version is set in one place.
 */
export const API_VERSION = z
  .object({ version: z.string().min(1) })
  .parse(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))).version;

/** An OpenAPI 3.1 document, as JSON. */
export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, Record<string, Operation>> };
type Operation = Record<string, unknown> & { operationId: string; responses: Record<string, unknown> };

const JSONAPI: MediaType = 'application/vnd.api+json';

/**
 * The API's licence as the document states it. The repository grants none (no LICENSE file, no
 * `license` in any package.json): all rights are reserved, which the SPDX expression names with a
 * LicenseRef. Change it here when the project chooses a licence.
 */
const LICENSE = { name: 'Proprietary: all rights reserved', identifier: 'LicenseRef-Proprietary' };

/** `/api/v1/chests/:id` → `/api/v1/chests/{id}`. */
export const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const pathParamsOf = (url: string) => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);

function security(doc: RouteDoc, apiKey: boolean): Record<string, string[]>[] {
  if (!apiKey) return [];
  if (doc.token === 'required') return [{ apikey: [], bearerAuth: [] }];
  if (doc.token === 'optional') return [{ apikey: [], bearerAuth: [] }, { apikey: [] }];
  return [{ apikey: [] }];
}

function parameters(doc: RouteDoc, facts: RouteFacts): Parameter[] {
  const out: Parameter[] = facts.pathParams.map((name) => {
    const p = doc.params?.[name];
    if (!p) throw new Error(`${facts.method} ${doc.operationId}: path parameter "${name}" is not documented`);
    return {
      name,
      in: 'path',
      required: true,
      description: p.description,
      schema: inputSchema(p.schema),
      ...(p.example ? { example: p.example } : {}),
    };
  });
  for (const [name, p] of Object.entries(doc.headers ?? {})) {
    out.push({
      name,
      in: 'header',
      required: false,
      description: p.description,
      schema: inputSchema(p.schema),
      ...(p.example ? { example: p.example } : {}),
    });
  }
  return [...out, ...(doc.query ? queryParameters(doc.query) : [])];
}

function successResponses(doc: RouteDoc): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of doc.responses) {
    const headers = {
      ...REQUEST_ID_HEADER,
      ...Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, h]) => [k, { description: h.description, schema: inputSchema(h.schema) }])),
    };
    out[String(r.status)] = {
      description: r.description,
      headers,
      ...(r.schema ? { content: { [r.mediaType ?? JSONAPI]: { schema: responseSchema(r.schema) } } } : {}),
    };
  }
  return out;
}

/** One operation object from a route's documentation and what the route itself declares. */
function operation(route: CollectedRoute, doc: RouteDoc): Operation {
  // The checks of the scope the route is registered in (plugins/scopes.ts).
  const scope = scopeOf(route);
  const scoped = scope !== 'public';
  const facts: RouteFacts = {
    method: route.method,
    apiKey: scoped,
    tokenChecked: scope === 'app' || scope === 'player',
    rateLimited: scoped,
    authLimited: route.config.authLimited === true,
    pathParams: pathParamsOf(route.url),
  };
  const success = successResponses(doc);
  const errors = errorResponses(doc, facts);
  const clash = Object.keys(success).find((s) => s in errors);
  if (clash) throw new Error(`${doc.operationId}: status ${clash} is documented both as success and as error`);
  const bodyType: MediaType = route.config.bodyType === 'json' ? 'application/json' : JSONAPI;
  return {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    security: security(doc, facts.apiKey),
    parameters: parameters(doc, facts),
    ...(doc.body
      ? {
          requestBody: {
            required: doc.body.required,
            content: { [bodyType]: { schema: inputSchema(doc.body.schema), ...(doc.bodyExample ? { example: doc.bodyExample } : {}) } },
          },
        }
      : {}),
    responses: { ...success, ...errors },
  };
}

/** The documentation of a route: its own, or the gateway's for its probes; none when undocumented. */
export function docOf(route: CollectedRoute): RouteDoc | undefined {
  return route.config.openapi ?? INFRASTRUCTURE_DOCS[`${route.method} ${route.url}`];
}

/**
 * Builds the OpenAPI 3.1 document of the gateway from the routes it registered: every documented
 * route becomes an operation (HEAD, which mirrors GET, is left out); undocumented routes are
 * absent, which the gateway's openapi test refuses. Throws on an inconsistent documentation (a
 * path parameter without schema, a duplicate operationId).
 */
export function buildOpenApiDocument(routes: CollectedRoute[], opts: { publicBaseUrl?: string }): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const ids = new Set<string>();
  for (const route of routes) {
    const doc = docOf(route);
    if (route.method === 'HEAD' || !doc) continue;
    if (ids.has(doc.operationId)) throw new Error(`duplicate operationId ${doc.operationId}`);
    ids.add(doc.operationId);
    const path = openApiPath(route.url);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, doc) };
  }
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.1',
    info: { title: 'Collectible Chest Service API', version: API_VERSION, description: API_DESCRIPTION, license: LICENSE },
    servers: [opts.publicBaseUrl ? { url: opts.publicBaseUrl.replace(/\/$/, '') } : { url: '/', description: 'This gateway' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: sorted,
    components: {
      schemas: componentSchemas(),
      headers: HEADER_COMPONENTS,
      securitySchemes: {
        apikey: {
          type: 'apiKey',
          in: 'header',
          name: 'apikey',
          description: "The app's key: identifies the app (tenant). Needed on every `/api` route and the spec's unprefixed aliases.",
        },
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'An access token from registration, login, refresh or guest creation (`meta.access_token`), for player operations. It must belong to the app of the `apikey`.',
        },
      },
    },
  };
}

import { z } from 'zod';
import { Liveness, OpenApiDocument, Readiness } from '../../resources/health.js';
import type { RouteDoc } from '../route-doc.js';

/**
 * Documentation of the gateway's own routes. The probes live in routes/health.ts (and /metrics in
 * the observability plugin); they are documented here by method and path, and appear in the
 * document only when the app has them.
 */

/** GET /healthz. */
const liveness: RouteDoc = {
  operationId: 'liveness',
  tag: 'Health',
  summary: 'Liveness probe',
  description: 'Answers while the process is up; checks nothing else.',
  token: 'none',
  query: null,
  responses: [{ status: 200, description: 'Alive.', schema: Liveness, mediaType: 'application/json' }],
};

/** GET /readyz. */
const readiness: RouteDoc = {
  operationId: 'readiness',
  tag: 'Health',
  summary: 'Readiness probe',
  description: 'Asks each backing service over NATS and pings Redis, each within `READY_TIMEOUT_MS`; 200 only when all answer.',
  token: 'none',
  query: null,
  responses: [
    { status: 200, description: 'Ready: every check passed.', schema: Readiness, mediaType: 'application/json' },
    { status: 503, description: 'Not ready: `checks` names what did not answer.', schema: Readiness, mediaType: 'application/json' },
  ],
};

/** GET /metrics. */
const metrics: RouteDoc = {
  operationId: 'metrics',
  tag: 'Health',
  summary: 'Prometheus metrics',
  description: "The gateway's metrics in the Prometheus text format (see docs/observability.md).",
  token: 'none',
  query: null,
  responses: [{ status: 200, description: 'The metrics.', mediaType: 'text/plain', schema: z.string() }],
};

/** Routes documented here rather than where they are registered, by `METHOD path`. */
export const INFRASTRUCTURE_DOCS: Record<string, RouteDoc> = {
  'GET /healthz': liveness,
  'GET /readyz': readiness,
  'GET /metrics': metrics,
};

/** GET /api/v1/openapi.json (registered with its doc in routes/docs.ts). */
export const openApiDocumentDoc: RouteDoc = {
  operationId: 'getOpenApiDocument',
  tag: 'Documentation',
  summary: 'This OpenAPI document',
  description: 'OpenAPI 3.1, generated from the schemas the gateway validates with. A browsable reference is at `/docs`.',
  token: 'none',
  query: null,
  responses: [{ status: 200, description: 'The document.', schema: OpenApiDocument, mediaType: 'application/json' }],
};

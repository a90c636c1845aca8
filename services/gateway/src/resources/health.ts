import { z } from 'zod';
import { component } from '../openapi/components.js';

/** Response schemas of the gateway's probes and of the OpenAPI document route. */

/** GET /healthz. */
export const Liveness = component('Liveness', 'The process is up.', z.object({ status: z.literal('ok') }));

/** GET /readyz, either way. */
export const Readiness = component(
  'Readiness',
  'Whether every backing service answers: `checks` names each (players, wallet, chests, collections, redis) with true or false.',
  z.object({ status: z.enum(['ready', 'not ready']), checks: z.record(z.string(), z.boolean()) }),
);

/** GET /api/v1/openapi.json. */
export const OpenApiDocument = component(
  'OpenApiDocument',
  'An OpenAPI 3.1 document (this one).',
  z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) }),
);

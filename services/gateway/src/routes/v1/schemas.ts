import type { components } from '@ccs/client';

/**
 * The resources and documents as the OpenAPI document describes them: the typed client's schema.ts,
 * generated from that document (npm run client:generate; test/ops/client-drift.test.ts keeps it in
 * step). Each response builder returns or `satisfies` its own, so a builder that drifts from the
 * documented schema fails the typecheck. A type-only import: nothing of the client runs in the gateway.
 */
export type Schemas = components['schemas'];

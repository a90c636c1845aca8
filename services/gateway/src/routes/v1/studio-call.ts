import type { FastifyRequest } from 'fastify';
import type { CallContext } from '@ccs/shared';
import type { components } from '@ccs/client';

/** The admin API's documents as the OpenAPI document describes them (the generated client schema): each response builder `satisfies` its own. */
export type Schemas = components['schemas'];

/** The call context of the admin API: the key's app, no player (a player's reads set it explicitly). */
export const studioCall = (request: FastifyRequest, playerId?: string): CallContext => ({
  requestId: request.id,
  appId: request.tenant!.appId,
  playerId,
});

import type { FastifyRequest } from 'fastify';
import type { CallContext } from '@ccs/shared';

/** The call context of the admin API: the key's app, no player (a player's reads set it explicitly). */
export const studioCall = (request: FastifyRequest, playerId?: string): CallContext => ({
  requestId: request.id,
  appId: request.tenant!.appId,
  playerId,
});

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, applyFieldset, GetMe, UpdateMe, type PlayerView } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, playerOf, sendDocument } from '../../../lib/http.js';
import { UpdateMeBody } from './bodies.js';
import { mePlayerResource } from './render.js';

const ME_QUERY = {
  include: ['chests'],
  fields: { player: ['id', 'email', 'is_anonymous', 'privacy', 'experience', 'created_at', 'chests'] },
} as const;

/** The calling player's document; `include=chests` is accepted (chests arrive with the chests service). */
function meDocument(request: FastifyRequest, p: PlayerView) {
  const { fields } = jsonApiQuery(request, ME_QUERY);
  return { data: applyFieldset(mePlayerResource(p), fields), included: [] };
}

/** GET and PATCH /api/v1/players/me. */
export default async function meRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me', async (request, reply) => {
    playerOf(request);
    jsonApiQuery(request, ME_QUERY);
    const me = await app.bus.request(GetMe, {}, callContext(request));
    return sendDocument(reply, 200, meDocument(request, me));
  });

  app.patch('/api/v1/players/me', { config: { bodyType: 'jsonapi' } }, async (request, reply) => {
    const player = playerOf(request);
    jsonApiQuery(request, ME_QUERY);
    const { data } = parseBody(UpdateMeBody, request.body);
    if (data.id !== undefined && data.id.toLowerCase() !== player.id.toLowerCase()) {
      throw AppError.conflict('id_mismatch', 'data.id must be the id of the calling player.', { pointer: '/data/id' });
    }
    const me = await app.bus.request(UpdateMe, { privacy: data.attributes.privacy }, callContext(request));
    return sendDocument(reply, 200, meDocument(request, me));
  });
}

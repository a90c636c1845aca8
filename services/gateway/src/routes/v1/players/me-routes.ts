import type { FastifyInstance, FastifyRequest } from 'fastify';
import { applyFieldset, GetMe, UpdateMe, type PlayerView } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, playerOf, sendDocument } from '../../../lib/http.js';
import { UpdateMeBody } from './bodies.js';
import { playerChests } from './player-chests.js';
import { mePlayerResource } from './render.js';
import { documented } from '../../../openapi/route-doc.js';
import * as docs from '../../../openapi/operations/players.js';
import { gatewayErrors } from '../../../errors.js';

const ME_QUERY = {
  include: ['chests'],
  fields: { player: ['id', 'email', 'is_anonymous', 'privacy', 'experience', 'country', 'birth_year', 'created_at', 'chests'] },
} as const;

/**
 * The calling player's document: relationships.chests lists the unopened chests (asked from the
 * chests service), and `include=chests` adds them as full resources in `included`.
 */
async function meDocument(request: FastifyRequest, p: PlayerView) {
  const { fields, include } = jsonApiQuery(request, ME_QUERY);
  const wanted = include.includes('chests');
  const chests = await playerChests(request, p.id, wanted);
  const data = applyFieldset(mePlayerResource(p, chests), fields);
  return { data, included: wanted && chests ? chests : [] };
}

/** GET and PATCH /api/v1/players/me. */
export default async function meRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me', { config: { openapi: documented(docs.getMe, { query: ME_QUERY }) } }, async (request, reply) => {
    jsonApiQuery(request, ME_QUERY);
    const me = await app.bus.request(GetMe, {}, callContext(request));
    return sendDocument(reply, 200, await meDocument(request, me));
  });

  const updateDoc = documented(docs.updateMe, { query: ME_QUERY, body: { schema: UpdateMeBody, required: true } });
  app.patch('/api/v1/players/me', { config: { bodyType: 'jsonapi', openapi: updateDoc } }, async (request, reply) => {
    const player = playerOf(request);
    jsonApiQuery(request, ME_QUERY);
    const { data } = parseBody(UpdateMeBody, request.body);
    if (data.id !== undefined && data.id.toLowerCase() !== player.id.toLowerCase()) {
      throw gatewayErrors.idMismatch();
    }
    const { privacy, country, birth_year } = data.attributes;
    // A new country or birth year reaches every replica's catalog flags as players' notice, which
    // this replica hears before the reply (plugins/purchase-flags.ts).
    const me = await app.bus.request(UpdateMe, { privacy, country, birthYear: birth_year }, callContext(request));
    return sendDocument(reply, 200, await meDocument(request, me));
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { applyFieldset, GetMe, UpdateMe, type PlayerView } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, playerOf, sendDocument, uuidParam } from '../../../lib/http.js';
import { UpdateMeBody } from './bodies.js';
import { playerChests } from './player-chests.js';
import { ME_PLAYER_FIELDS, mePlayerResource } from '../../../resources/players.js';
import { documented } from '../../../openapi/route-doc.js';
import * as docs from '../../../openapi/operations/players.js';
import { gatewayErrors } from '../../../errors.js';
import { linkBase } from '../resource-links.js';

const ME_QUERY = { include: ['chests'], fields: { player: ME_PLAYER_FIELDS } };

/**
 * The calling player's document: relationships.chests lists the unopened chests (asked from the
 * chests service), and `include=chests` adds them as full resources in `included`.
 */
async function meDocument(request: FastifyRequest, p: PlayerView) {
  const { fields, include } = jsonApiQuery(request, ME_QUERY);
  const wanted = include.includes('chests');
  const chests = await playerChests(request, p.id, wanted);
  const data = applyFieldset(mePlayerResource(p, linkBase(request), chests), fields);
  return { data, included: wanted && chests ? chests : [] };
}

/**
 * The `{id}` of the player's canonical URL, `/players/{id}`: it must be the caller's own id (any
 * case), which then answers as `me` does. Any other id is a 404, as an unknown player is, whoever
 * it names: the gateway looks nothing up, so the answer never tells whether such a player exists
 * (a player's document, with its email and declared profile, is shown to that player alone; the
 * studio reads others through the admin API). A malformed id is a 400.
 */
function checkOwnId(request: FastifyRequest): void {
  const caller = playerOf(request);
  if (uuidParam(request, 'id') !== caller.id.toLowerCase()) throw gatewayErrors.notOwnPlayer();
}

/** GET /players/me: the calling player. */
async function getMe(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, ME_QUERY);
  const me = await request.server.bus.request(GetMe, {}, callContext(request));
  return sendDocument(reply, 200, await meDocument(request, me));
}

/** PATCH /players/me: the attributes a player may change of themselves. */
async function updateMe(request: FastifyRequest, reply: FastifyReply) {
  const player = playerOf(request);
  jsonApiQuery(request, ME_QUERY);
  const { data } = parseBody(UpdateMeBody, request.body);
  if (data.id !== undefined && data.id.toLowerCase() !== player.id.toLowerCase()) {
    throw gatewayErrors.idMismatch();
  }
  const { privacy, country, birth_year } = data.attributes;
  // A new country or birth year reaches every replica's catalog flags as players' notice, which
  // this replica hears before the reply (plugins/purchase-flags.ts).
  const me = await request.server.bus.request(UpdateMe, { privacy, country, birthYear: birth_year }, callContext(request));
  return sendDocument(reply, 200, await meDocument(request, me));
}

/**
 * GET and PATCH /api/v1/players/me, and the same at the player's canonical URL
 * /api/v1/players/{own id} (the player resource's `links.self`), where JSON:API clients that
 * address a resource by its type and id read and update it.
 */
export default async function meRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me', { config: { openapi: documented(docs.getMe, { query: ME_QUERY }) } }, getMe);
  app.get('/api/v1/players/:id', { config: { openapi: documented(docs.getPlayer, { query: ME_QUERY }) } }, async (request, reply) => {
    checkOwnId(request);
    return getMe(request, reply);
  });

  const body = { schema: UpdateMeBody, required: true };
  app.patch('/api/v1/players/me', { config: { bodyType: 'jsonapi', openapi: documented(docs.updateMe, { query: ME_QUERY, body }) } }, updateMe);
  const updateDoc = documented(docs.updatePlayer, { query: ME_QUERY, body });
  app.patch('/api/v1/players/:id', { config: { bodyType: 'jsonapi', openapi: updateDoc } }, async (request, reply) => {
    checkOwnId(request);
    return updateMe(request, reply);
  });
}

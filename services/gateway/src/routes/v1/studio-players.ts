import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminUpdatePlayerProfile } from '@ccs/shared';
import { z } from 'zod';
import { ActionMeta } from './studio-note.js';
import { jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio-players.js';
import { linkBase } from './resource-links.js';
import { studioPlayerProfileDocument } from '../../resources/studio-players.js';

/**
 * The studio's corrections of a player's declared profile (docs/content.md, "Compliance"): with the
 * app's secret key, the country and birth year a player cannot change themselves. Registered in
 * the studio scope by studioRoutes, so every call is in the audit log.
 */

/** PATCH body: the attributes to set (null clears one; absent ones stay). */
export const StudioPlayerBody = z.object({
  data: z.object({
    type: z.literal('player', { error: 'data.type must be "player".' }),
    attributes: z
      .object({
        country: z
          .string({ error: 'country must be an ISO 3166-1 alpha-2 code such as "DE", or null.' })
          .max(100)
          .nullable()
          .optional()
          .describe('ISO 3166-1 alpha-2, any case; null clears it.'),
        birth_year: z
          .number({ error: 'birth_year must be a whole year such as 1990, or null.' })
          .int({ error: 'birth_year must be a whole year such as 1990, or null.' })
          .nullable()
          .optional()
          .describe('A year from 1900 to this one; null clears it.'),
      })
      .strict(),
  }),
  meta: ActionMeta,
});

/** PATCH /api/v1/admin/players/{id}: sets or clears a player's declared country and birth year. */
async function updatePlayer(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const playerId = uuidParam(request, 'id');
  const a = parseBody(StudioPlayerBody, request.body).data.attributes;
  const appId = request.tenant!.appId;
  const r = await request.server.bus.request(
    AdminUpdatePlayerProfile,
    { appId, playerId, country: a.country, birthYear: a.birth_year },
    { requestId: request.id, appId },
  );
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, studioPlayerProfileDocument(r, linkBase(request)));
}

/** Registers the route in the studio scope (called by studioRoutes, so it shares its audit hook). */
export async function studioPlayerRoutes(app: FastifyInstance) {
  app.patch(
    '/api/v1/admin/players/:id',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.adminUpdatePlayer, { query: NO_QUERY, body: { schema: StudioPlayerBody, required: true } }),
      },
    },
    updatePlayer,
  );
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DissolveCollectible } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, sendDocument, writeKeysOf } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/trading.js';
import { gatewayErrors } from '../../errors.js';
import { dissolveDocument } from '../../resources/trading.js';

export const DissolveBodySchema = z.object({
  data: z.object({
    type: z.literal('dissolve', { error: 'data.type must be "dissolve".' }),
    attributes: z.object({ quantity: z.number().int().min(1).max(1_000_000).describe('Copies to dissolve.') }).strict(),
  }),
});

/** A collectible id from the path: any string may be asked for, overlong ones cannot exist. */
function collectibleIdOf(request: FastifyRequest): string {
  const id = (request.params as Record<string, string>).collectible_id ?? '';
  if (id.length === 0 || id.length > 200) throw gatewayErrors.contentNotFound('collectible');
  return id;
}

/** POST /api/v1/players/me/collection/{collectible_id}/dissolve: copies into trade tokens. */
async function dissolve(request: FastifyRequest, reply: FastifyReply) {
  const collectibleId = collectibleIdOf(request);
  jsonApiQuery(request, NO_QUERY);
  const keys = writeKeysOf(request);
  const { quantity } = parseBody(DissolveBodySchema, request.body).data.attributes;
  const r = await request.server.bus.request(DissolveCollectible, { collectibleId, quantity, ...keys }, callContext(request));
  reply.header('cache-control', 'no-store');
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 201, dissolveDocument(r));
}

/** Trading and dissolving routes of the calling player (docs/content.md, "Trading"). */
export async function tradingRoutes(app: FastifyInstance) {
  app.post(
    '/api/v1/players/me/collection/:collectible_id/dissolve',
    { config: { openapi: documented(docs.dissolveCollectible, { query: NO_QUERY, body: { schema: DissolveBodySchema, required: true } }) } },
    dissolve,
  );
}

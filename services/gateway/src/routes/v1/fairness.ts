import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ClientSeedSchema, GetFairness, ListPity, RotateSeed, VerifyOpening } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/fairness.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { linkBase } from './resource-links.js';
import { fairnessResource, rotationDocument, pityDocument, verificationDocument } from '../../resources/fairness.js';

/** PATCH /players/me/fairness: the client seed to use from now on. */
export const ClientSeedBody = z.object({
  data: z.object({
    type: z.literal('fairness', { error: 'data.type must be "fairness".' }),
    id: z.literal('current').optional(),
    attributes: z.object({ client_seed: ClientSeedSchema }).strict(),
  }),
});

/**
 * Verifiable randomness (docs/fairness.md) and pity: the caller's seed pair, its rotation, the
 * caller's pity counters and the verification of one of their openings. Never cached: each answer
 * is the caller's own and changes with every opening.
 */
export async function fairnessRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me/fairness', { config: { openapi: documented(docs.getFairness, { query: NO_QUERY }) } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const f = await app.bus.request(GetFairness, {}, callContext(request));
    reply.header('cache-control', 'no-store');
    return sendDocument(reply, 200, { data: fairnessResource(f, linkBase(request)) });
  });

  const patchDoc = documented(docs.setClientSeed, { query: NO_QUERY, body: { schema: ClientSeedBody, required: true } });
  app.patch('/api/v1/players/me/fairness', { config: { bodyType: 'jsonapi', openapi: patchDoc } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const { client_seed } = parseBody(ClientSeedBody, request.body).data.attributes;
    const r = await app.bus.request(RotateSeed, { clientSeed: client_seed }, callContext(request));
    reply.header('cache-control', 'no-store');
    return sendDocument(reply, 200, rotationDocument(r, linkBase(request)));
  });

  // No body needed: an empty one sent with the JSON:API media type is fine too.
  await app.register(async (noBody) => {
    allowEmptyJsonApiBody(noBody);
    noBody.post(
      '/api/v1/players/me/fairness/rotate',
      { config: { openapi: documented(docs.rotateSeed, { query: NO_QUERY }) } },
      async (request, reply) => {
        jsonApiQuery(request, NO_QUERY);
        const r = await app.bus.request(RotateSeed, {}, callContext(request));
        reply.header('cache-control', 'no-store');
        return sendDocument(reply, 200, rotationDocument(r, linkBase(request)));
      },
    );
  });

  app.get('/api/v1/players/me/pity', { config: { openapi: documented(docs.listPity, { query: NO_QUERY }) } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const r = await app.bus.request(ListPity, {}, callContext(request));
    reply.header('cache-control', 'no-store');
    return sendDocument(reply, 200, pityDocument(r));
  });

  app.get(
    '/api/v1/openings/:id/verification',
    { config: { openapi: documented(docs.verifyOpening, { query: NO_QUERY }) } },
    async (request, reply) => {
      const openingId = uuidParam(request, 'id');
      jsonApiQuery(request, NO_QUERY);
      const v = await app.bus.request(VerifyOpening, { openingId }, callContext(request));
      reply.header('cache-control', 'no-store');
      return sendDocument(reply, 200, verificationDocument(v, linkBase(request)));
    },
  );
}

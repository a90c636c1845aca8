import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ClientSeedSchema, GetFairness, ListPity, RotateSeed, VerifyOpening, type ReplyOf } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/fairness.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { linkBase, selfLinks } from './resource-links.js';
import type { FairnessDocument, PityDocument, SeedRotationDocument, VerificationDocument } from '../../resources/fairness.js';

type Fairness = ReplyOf<typeof GetFairness>;
type Rotation = ReplyOf<typeof RotateSeed>;

/** PATCH /players/me/fairness: the client seed to use from now on. */
export const ClientSeedBody = z.object({
  data: z.object({
    type: z.literal('fairness', { error: 'data.type must be "fairness".' }),
    id: z.literal('current').optional(),
    attributes: z.object({ client_seed: ClientSeedSchema }).strict(),
  }),
});

const fairnessResource = (f: Fairness, base: string): FairnessDocument['data'] => ({
  type: 'fairness',
  id: 'current',
  attributes: { server_seed_hash: f.serverSeedHash, client_seed: f.clientSeed, nonce: f.nonce, algorithm: f.algorithm },
  relationships: {},
  links: selfLinks.fairness(base),
});

const rotationDocument = (r: Rotation, base: string): SeedRotationDocument => ({
  data: fairnessResource(r.fairness, base),
  meta: {
    revealed: {
      server_seed: r.revealed.serverSeed,
      server_seed_hash: r.revealed.serverSeedHash,
      client_seed: r.revealed.clientSeed,
      last_nonce: r.revealed.lastNonce,
    },
  },
});

/** The caller's pity counters, one resource per pity group. */
const pityDocument = (r: ReplyOf<typeof ListPity>): PityDocument => ({
  data: r.groups.map((g) => ({
    type: 'pity' as const,
    id: g.group,
    attributes: {
      rarity: g.rarity,
      opens_since: g.opensSince,
      hard: g.hard,
      guaranteed_within: g.guaranteedWithin,
      chest_type_ids: g.chestTypeIds,
    },
    relationships: {},
  })),
  meta: { total_count: r.groups.length },
});

/** An opening's verification: its inputs, the recomputed items and whether they match. */
const verificationDocument = (v: ReplyOf<typeof VerifyOpening>, base: string): VerificationDocument => ({
  data: {
    type: 'opening_verification',
    id: v.openingId,
    attributes: {
      chest_type_id: v.chestTypeId,
      rules_version: v.rulesVersion,
      algorithm: v.algorithm,
      server_seed: v.serverSeed,
      server_seed_hash: v.serverSeedHash,
      client_seed: v.clientSeed,
      nonce: v.nonce,
      opens_since_before: v.opensSinceBefore,
      rules: v.rules,
      recomputed: v.recomputed.map((it) => ({ slot: it.slot, collectible_id: it.collectibleId, rarity: it.rarity })),
      matches: v.matches,
    },
    relationships: {},
    links: selfLinks.openingVerification(base, v.openingId),
  },
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
    return sendDocument(reply, 200, { data: fairnessResource(f, linkBase(request)) } satisfies FairnessDocument);
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

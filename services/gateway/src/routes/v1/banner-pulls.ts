import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { BannerIdSchema, CurrencyCodeSchema, PullBanner, SparkBanner } from '@ccs/shared';
import { callContext, idempotencyKeyOf, jsonApiQuery, parseBody, sendDocument } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/banner-pulls.js';
import { gatewayErrors } from '../../errors.js';
import { bannerPullResult, sparkExchangeDocument } from '../../resources/banner-pulls.js';

export const PullBodySchema = z.object({
  data: z.object({
    type: z.literal('pull', { error: 'data.type must be "pull".' }),
    attributes: z.object({
      count: z.union([z.literal(1), z.literal(10)], { error: 'count must be 1 or 10.' }),
      currency: CurrencyCodeSchema.describe('currency code'),
    }),
  }),
});

export const SparkBodySchema = z.object({
  data: z.object({
    type: z.literal('spark', { error: 'data.type must be "spark".' }),
    attributes: z.object({
      collectible_id: z.string().min(1).max(64).describe("one of the banner's featured collectibles"),
    }),
  }),
});

/** The banner id of the path: a slug; anything else is no banner of the app (404, as an unknown one). */
function bannerIdOf(request: FastifyRequest): string {
  const id = (request.params as { id?: unknown }).id;
  const parsed = BannerIdSchema.safeParse(id);
  if (!parsed.success) throw gatewayErrors.bannerNotFound();
  return parsed.data;
}

/** POST /api/v1/banners/{id}/pull: 1 or 10 pulls, paid and opened as one batch (docs/design.md §8). */
async function pull(request: FastifyRequest, reply: FastifyReply) {
  const bannerId = bannerIdOf(request);
  jsonApiQuery(request, NO_QUERY);
  const idempotencyKey = idempotencyKeyOf(request);
  const { count, currency } = parseBody(PullBodySchema, request.body).data.attributes;
  const r = await request.server.bus.request(PullBanner, { bannerId, count, currency, idempotencyKey }, callContext(request));
  reply.header('cache-control', 'no-store');
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 200, bannerPullResult(r, bannerId, currency));
}

/** POST /api/v1/banners/{id}/spark: spark points for one featured collectible, exactly once. */
async function spark(request: FastifyRequest, reply: FastifyReply) {
  const bannerId = bannerIdOf(request);
  jsonApiQuery(request, NO_QUERY);
  const idempotencyKey = idempotencyKeyOf(request);
  const collectibleId = parseBody(SparkBodySchema, request.body).data.attributes.collectible_id;
  const r = await request.server.bus.request(SparkBanner, { bannerId, collectibleId, idempotencyKey }, callContext(request));
  reply.header('cache-control', 'no-store');
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 201, sparkExchangeDocument(r));
}

/** A banner's pull and spark (player scope). */
export async function bannerPullRoutes(app: FastifyInstance) {
  app.post(
    '/api/v1/banners/:id/pull',
    { config: { bodyType: 'jsonapi', openapi: documented(docs.pullBanner, { query: NO_QUERY, body: { schema: PullBodySchema, required: true } }) } },
    pull,
  );
  app.post(
    '/api/v1/banners/:id/spark',
    {
      config: { bodyType: 'jsonapi', openapi: documented(docs.sparkBanner, { query: NO_QUERY, body: { schema: SparkBodySchema, required: true } }) },
    },
    spark,
  );
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GetBanner, GetBannerOdds, ListBanners } from '@ccs/shared';
import { callContext, jsonApiQuery, sendDocument } from '../../lib/http.js';
import { gatewayErrors } from '../../errors.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/banners.js';
import { linkBase } from './resource-links.js';
import { type BannerDocument, type BannerListDocument, bannerResource, bannerOddsDocument } from '../../resources/banners.js';

/**
 * Gacha banners, the read side (docs/design.md §8): GET /api/v1/banners, /banners/{id} and
 * /banners/{id}/odds, with the apikey alone or a player's token (which adds `meta.player`, the
 * caller's standing, and makes the answer private). Banners change with the clock (`active`, the
 * list's window) and carry the caller's standing: every read asks chests, never the reply cache.
 */

/** The banner id of the path: a slug, or no banner at all (404, never a 400 or a 500). */
function bannerIdOf(request: FastifyRequest): string {
  const id = (request.params as Record<string, string>).id ?? '';
  if (!GetBanner.request.shape.bannerId.safeParse(id).success) throw gatewayErrors.bannerNotFound();
  return id;
}

/** A read with a token carries the caller's standing: private. */
function privateWithToken(request: FastifyRequest, reply: FastifyReply): void {
  if (request.player) reply.header('cache-control', 'private, no-store');
}

/** GET /api/v1/banners: the active and coming banners. */
export async function listBanners(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const r = await request.server.bus.request(ListBanners, {}, callContext(request));
  privateWithToken(request, reply);
  return sendDocument(reply, 200, {
    data: r.banners.map((b) => bannerResource(b, linkBase(request))),
    meta: { total_count: r.banners.length },
  } satisfies BannerListDocument);
}

/** GET /api/v1/banners/{id}: one banner. */
export async function getBanner(request: FastifyRequest, reply: FastifyReply) {
  const bannerId = bannerIdOf(request);
  jsonApiQuery(request, NO_QUERY);
  const b = await request.server.bus.request(GetBanner, { bannerId }, callContext(request));
  privateWithToken(request, reply);
  return sendDocument(reply, 200, { data: bannerResource(b, linkBase(request)) } satisfies BannerDocument);
}

/** GET /api/v1/banners/{id}/odds: the banner odds document (docs/fairness.md, "Banner pulls"). */
export async function getBannerOdds(request: FastifyRequest, reply: FastifyReply) {
  const bannerId = bannerIdOf(request);
  jsonApiQuery(request, NO_QUERY);
  const o = await request.server.bus.request(GetBannerOdds, { bannerId }, callContext(request));
  privateWithToken(request, reply);
  return sendDocument(reply, 200, bannerOddsDocument(o, linkBase(request)));
}

/** The banner reads (app scope: a Bearer token adds the caller's standing). */
export async function bannerRoutes(app: FastifyInstance) {
  app.get('/api/v1/banners', { config: { openapi: documented(docs.listBanners, { query: NO_QUERY }) } }, listBanners);
  app.get('/api/v1/banners/:id', { config: { openapi: documented(docs.getBanner, { query: NO_QUERY }) } }, getBanner);
  app.get('/api/v1/banners/:id/odds', { config: { openapi: documented(docs.getBannerOdds, { query: NO_QUERY }) } }, getBannerOdds);
}

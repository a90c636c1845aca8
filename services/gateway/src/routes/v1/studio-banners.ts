import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminBannerStats, BannerIdSchema } from '@ccs/shared';
import { jsonApiQuery, sendDocument } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio-banners.js';
import { gatewayErrors } from '../../errors.js';
import { studioCall } from './studio-call.js';
import { SIMULATION_ANSWER_TIMEOUT_MS } from './studio-chests.js';
import { linkBase } from './resource-links.js';
import { bannerStatsDocument } from '../../resources/studio-banners.js';

/**
 * The admin API's banner routes (docs/design.md §8): a banner's real pulls against its disclosed
 * figures and a seeded simulation, computed by chests (the owner of the openings and the drop
 * tables); the gateway only routes and renders. Registered in the studio scope by studioRoutes.
 */

/** GET /api/v1/admin/banners/{id}/stats. */
export async function bannerStats(request: FastifyRequest, reply: FastifyReply) {
  const id = (request.params as Record<string, string>).id ?? '';
  // Anything that is no slug names no banner: 404, never a 400 or a 500.
  if (!BannerIdSchema.safeParse(id).success) throw gatewayErrors.bannerNotFound();
  jsonApiQuery(request, NO_QUERY);
  // Its simulation may wait for a turn and run as the odds simulator's does: the same bound.
  const s = await request.server.bus.request(AdminBannerStats, { appId: request.tenant!.appId, bannerId: id }, studioCall(request), {
    timeoutMs: SIMULATION_ANSWER_TIMEOUT_MS,
  });
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, bannerStatsDocument(s, linkBase(request)));
}

/** The admin API's banner routes. */
export async function studioBannerRoutes(app: FastifyInstance) {
  app.get('/api/v1/admin/banners/:id/stats', { config: { openapi: documented(docs.adminBannerStats, { query: NO_QUERY }) } }, bannerStats);
}

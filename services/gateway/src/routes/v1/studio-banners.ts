import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminBannerStats, BannerIdSchema, type ReplyOf } from '@ccs/shared';
import { jsonApiQuery, sendDocument } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio-banners.js';
import { gatewayErrors } from '../../errors.js';
import { studioCall } from './studio-call.js';
import { SIMULATION_ANSWER_TIMEOUT_MS } from './studio-chests.js';
import { linkBase, selfLinks } from './resource-links.js';
import type { BannerStatsDocument } from '../../resources/studio-banners.js';

/**
 * The admin API's banner routes (DESIGN.md §8): a banner's real pulls against its disclosed
 * figures and a seeded simulation, computed by chests (the owner of the openings and the drop
 * tables); the gateway only routes and renders. Registered in the studio scope by studioRoutes.
 */

/** Drops binary floating-point noise from a computed figure (as the banner odds do). */
const exact = (x: number | null): number | null => (x === null ? null : Number(x.toPrecision(15)));
const share = (s: { share: number; low: number | null; high: number | null }) => ({ share: exact(s.share)!, low: exact(s.low), high: exact(s.high) });

type Stats = ReplyOf<typeof AdminBannerStats>;

/** What the real pulls recorded, as the API names it. */
const realOf = (r: Stats['real']) => ({
  pulls: r.pulls,
  players: r.players,
  since: r.since,
  items: r.items,
  featured_rarity_items: r.featuredRarityItems,
  featured_items: r.featuredItems,
  featured_share: share(r.featuredShare),
  collectibles: r.collectibles,
  guarantees_used: r.guaranteesUsed,
  floor_rerolls: r.floorRerolls,
  spark_exchanges: r.sparkExchanges,
  points_settled: r.pointsSettled,
  players_settled: r.playersSettled,
  points_held: r.pointsHeld,
});

/** The seeded simulation, as the API names it. */
const simulationOf = (s: Stats['simulation']) => ({
  seed: s.seed,
  players: s.players,
  pulls_per_player: s.pullsPerPlayer,
  pulls: s.pulls,
  items: s.items,
  featured_rarity_items: s.featuredRarityItems,
  featured_items: s.featuredItems,
  featured_share: share(s.featuredShare),
  collectibles: s.collectibles,
  first_featured: { mean: exact(s.firstFeatured.mean), players: s.firstFeatured.players },
  spark: s.spark && {
    cost: s.spark.cost,
    collectible: s.spark.collectible,
    without_spark: exact(s.spark.withoutSpark)!,
    with_spark: exact(s.spark.withSpark)!,
    sparked: exact(s.spark.sparked)!,
    players: s.spark.players,
  },
});

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
  const b = s.banner;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'banner_stats',
      id: b.id,
      attributes: {
        banner: {
          name: b.name,
          starts_at: b.startsAt,
          ends_at: b.endsAt,
          active: b.active,
          featured: b.featured,
          guarantee: b.guarantee,
          spark: b.spark,
          pity_group: b.pityGroup,
          ten_pull_floor: b.tenPullFloor,
        },
        chest: { id: s.chestTypeId, slug: s.chest.slug, name: s.chest.name, rules_version: s.chest.rulesVersion },
        real: realOf(s.real),
        disclosed: {
          share: s.disclosed.share,
          long_run_share: exact(s.disclosed.longRunShare)!,
          expected_pulls_to_featured: {
            with_guarantee: exact(s.disclosed.expectedPullsToFeatured.withGuarantee),
            without_guarantee: exact(s.disclosed.expectedPullsToFeatured.withoutGuarantee),
          },
        },
        simulation: simulationOf(s.simulation),
      },
      links: selfLinks.bannerStats(linkBase(request), b.id),
    },
  } satisfies BannerStatsDocument);
}

/** The admin API's banner routes. */
export async function studioBannerRoutes(app: FastifyInstance) {
  app.get('/api/v1/admin/banners/:id/stats', { config: { openapi: documented(docs.adminBannerStats, { query: NO_QUERY }) } }, bannerStats);
}

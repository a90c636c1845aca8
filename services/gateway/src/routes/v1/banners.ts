import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GetBanner, GetBannerOdds, ListBanners, type BannerPlayer, type BannerView, type ReplyOf } from '@ccs/shared';
import { callContext, jsonApiQuery, sendDocument } from '../../lib/http.js';
import { gatewayErrors } from '../../errors.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/banners.js';
import { linkBase, selfLinks } from './resource-links.js';
import type { Banner, BannerDocument, BannerListDocument, BannerOddsDocument } from '../../resources/banners.js';

/**
 * Gacha banners, the read side (DESIGN.md §8): GET /api/v1/banners, /banners/{id} and
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

/** The caller's standing as the API names it. */
const standing = (p: BannerPlayer) => ({ pulls: p.pulls, spark_points: p.sparkPoints, guaranteed_featured: p.guaranteedFeatured, pity: p.pity });

/** The members a banner and its odds document share. */
const bannerMembers = (b: BannerView) => ({
  starts_at: b.startsAt,
  ends_at: b.endsAt,
  featured: b.featured,
  guarantee: b.guarantee,
  spark: b.spark,
  pity_group: b.pityGroup,
  ten_pull_floor: b.tenPullFloor,
});

/** A pending change of a banner's rules, as catalog chests announce theirs (absent: none). */
const oddsChange = (b: BannerView) =>
  b.oddsChange ? { odds_change: { effective_at: b.oddsChange.effectiveAt, rules_version: b.oddsChange.rulesVersion } } : {};

/** A banner resource, with its featured collectibles' names and price per pull; the chest type it pulls as a relationship to the catalog chest. */
function bannerResource(b: ReplyOf<typeof GetBanner>, base: string): Banner {
  return {
    type: 'banner',
    id: b.id,
    attributes: {
      name: b.name,
      ...bannerMembers(b),
      featured: { ...b.featured, names: b.featuredNames },
      active: b.active,
      price_per_pull: b.pricePerPull,
    },
    relationships: { chest_type: { data: { type: 'chest', id: b.chestTypeId } } },
    links: selfLinks.banner(base, b.id),
    meta: { ...(b.player ? { player: standing(b.player) } : {}), ...oddsChange(b) },
  };
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

/** Drops binary floating-point noise from a disclosed figure (as the chest odds do). */
const exact = (x: number | null): number | null => (x === null ? null : Number(x.toPrecision(15)));

/** GET /api/v1/banners/{id}/odds: the banner odds document (docs/fairness.md, "Banner pulls"). */
export async function getBannerOdds(request: FastifyRequest, reply: FastifyReply) {
  const bannerId = bannerIdOf(request);
  jsonApiQuery(request, NO_QUERY);
  const o = await request.server.bus.request(GetBannerOdds, { bannerId }, callContext(request));
  privateWithToken(request, reply);
  return sendDocument(reply, 200, {
    data: {
      type: 'banner_odds',
      id: o.banner.id,
      attributes: {
        chest_type_id: o.banner.chestTypeId,
        rules_version: o.rulesVersion,
        banner_rules_version: o.banner.rulesVersion,
        banner_rules: o.bannerRules,
        ...bannerMembers(o.banner),
        long_run_featured_share: exact(o.longRunFeaturedShare)!,
        expected_pulls_to_featured: {
          with_guarantee: exact(o.expectedPullsToFeatured.withGuarantee),
          without_guarantee: exact(o.expectedPullsToFeatured.withoutGuarantee),
        },
        rules: o.rules,
        rule_inputs: o.ruleInputs,
      },
      relationships: {},
      links: selfLinks.bannerOdds(linkBase(request), o.banner.id),
    },
    meta: {
      ...(o.player ? { player: { ...standing(o.player), expected_pulls_to_featured: exact(o.player.expectedPullsToFeatured) } } : {}),
      ...oddsChange(o.banner),
    },
  } satisfies BannerOddsDocument);
}

/** The banner reads (app scope: a Bearer token adds the caller's standing). */
export async function bannerRoutes(app: FastifyInstance) {
  app.get('/api/v1/banners', { config: { openapi: documented(docs.listBanners, { query: NO_QUERY }) } }, listBanners);
  app.get('/api/v1/banners/:id', { config: { openapi: documented(docs.getBanner, { query: NO_QUERY }) } }, getBanner);
  app.get('/api/v1/banners/:id/odds', { config: { openapi: documented(docs.getBannerOdds, { query: NO_QUERY }) } }, getBannerOdds);
}

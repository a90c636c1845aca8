import {
  appOf,
  endpoint,
  expectedPullsToFeatured,
  GetBanner,
  GetBannerOdds,
  ListBanners,
  longRunFeaturedShare,
  optionalCallerOf,
  type BannerPlayer,
  type BannerView,
  type CallContext,
} from '@ccs/shared';
import { currentBanners, currentContent, findBanner, isActive, type Banner } from '../banners/banners.js';
import { disclosedBannerRules } from '../banners/banner-rules.js';
import type { ChestsDeps } from '../deps.js';
import { bannerErrors } from '../errors.js';
import { catalogPrices, findChestType } from '../repositories/chest-types-repo.js';
import { NO_STANDING, readBannerStanding, readBannerStandings } from '../repositories/banners-repo.js';
import { disclose } from './catalog-odds.js';

/** The read side of gacha banners (docs/design.md §8): the app's banners, one banner, a banner's odds document. */

/** A banner as the API shows it, at `now`. */
export function bannerView(b: Banner, now: Date): BannerView {
  const c = b.content;
  return {
    id: b.id,
    name: c.name,
    startsAt: c.starts_at,
    endsAt: c.ends_at,
    active: isActive(b, now),
    featured: { rarity: c.featured.rarity, collectibles: [...c.featured.collectibles], share: c.featured.share },
    guarantee: c.guarantee,
    spark: c.spark ? { cost: c.spark.cost, currency: c.spark.currency ?? null } : null,
    pityGroup: b.group,
    tenPullFloor: c.ten_pull_floor ?? null,
    chestTypeId: b.chestTypeId,
    rulesVersion: b.rulesVersion,
    ...(b.oddsChange ? { oddsChange: b.oddsChange } : {}),
  };
}

/** The caller's standing on a banner, when the call carries a player (undefined otherwise). */
async function standingOf(deps: ChestsDeps, appId: string, ctx: CallContext, b: Banner): Promise<BannerPlayer | undefined> {
  const playerId = optionalCallerOf(ctx);
  if (!playerId) return undefined;
  return readBannerStanding(deps.pool, appId, playerId, b.group);
}

/** What the list and the one-banner read add to a banner: its featured collectibles' names and its price per pull. */
interface Shown {
  featuredNames: string[];
  pricePerPull: Record<string, number>;
}

/**
 * The names of the banners' featured collectibles (from the current content, or from the content
 * version of the banner's rules in force for one the current content no longer has; the id when
 * neither names it) and each banner's price per pull (its chest type's catalog price), in order.
 */
async function shownOf(deps: ChestsDeps, appId: string, banners: Banner[]): Promise<Shown[]> {
  const [content, prices] = await Promise.all([
    currentContent(deps, appId),
    catalogPrices(deps.pool, appId, [...new Set(banners.map((b) => b.chestTypeId))]),
  ]);
  const names = new Map(content?.collectibles.map((c) => [c.id, c.name]));
  return Promise.all(
    banners.map(async (b) => {
      const ids = b.content.featured.collectibles;
      if (ids.some((id) => !names.has(id))) {
        for (const c of (await deps.drops.content(appId, b.rulesVersion))?.collectibles ?? []) if (!names.has(c.id)) names.set(c.id, c.name);
      }
      return { featuredNames: ids.map((id) => names.get(id) ?? id), pricePerPull: prices.get(b.chestTypeId) ?? {} };
    }),
  );
}

/** Expected pulls as a JSON number: null where the banner can never give a featured collectible. */
const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** chests.v1.list_banners: the banners of the current content whose window has not ended, in content order. */
export function listBannersEndpoint(deps: ChestsDeps) {
  return endpoint(ListBanners, async (_req, ctx) => {
    const appId = appOf(ctx);
    const now = new Date();
    const open = (await currentBanners(deps, appId)).filter((b) => now < b.endsAt);
    // The caller's standings in all their groups, in one statement.
    const playerId = optionalCallerOf(ctx);
    const [standings, shown] = await Promise.all([
      playerId && open.length ? readBannerStandings(deps.pool, appId, playerId, [...new Set(open.map((b) => b.group))]) : undefined,
      shownOf(deps, appId, open),
    ]);
    const banners = open.map((b, i) => {
      const player = standings && (standings.get(b.group) ?? NO_STANDING);
      return { ...bannerView(b, now), ...shown[i]!, ...(player ? { player } : {}) };
    });
    return { banners };
  });
}

/** chests.v1.get_banner: one banner of the current content (an ended one too). */
export function getBannerEndpoint(deps: ChestsDeps) {
  return endpoint(GetBanner, async (req, ctx) => {
    const appId = appOf(ctx);
    const b = await findBanner(deps, appId, req.bannerId);
    if (!b) throw bannerErrors.bannerNotFound();
    const [player, [shown]] = await Promise.all([standingOf(deps, appId, ctx, b), shownOf(deps, appId, [b])]);
    return { ...bannerView(b, new Date()), ...shown!, ...(player ? { player } : {}) };
  });
}

/**
 * chests.v1.get_banner_odds: the banner odds document (docs/fairness.md, "Banner pulls"): the
 * banner with its rules in force (as the odds log hashes them), its chest type's rules in force (those its pulls roll) with their inputs, the long-run
 * featured share and the exact expected pulls to a featured collectible, from a fresh standing
 * with and without the guarantee, and from the caller's standing when there is one.
 */
export function getBannerOddsEndpoint(deps: ChestsDeps) {
  return endpoint(GetBannerOdds, async (req, ctx) => {
    const appId = appOf(ctx);
    const b = await findBanner(deps, appId, req.bannerId);
    if (!b) throw bannerErrors.bannerNotFound();
    // Not catalog-only: a content version applied meanwhile may have left the chest type out.
    const type = await findChestType(deps.pool, appId, b.chestTypeId, { catalogOnly: false });
    if (!type) throw bannerErrors.bannerNotFound();
    const resolved = await deps.drops.resolve(appId, type);
    const disclosed = disclose(resolved);
    const rules = { featured: b.content.featured, guarantee: b.content.guarantee, ten_pull_floor: b.content.ten_pull_floor };
    const standing = await standingOf(deps, appId, ctx, b);
    return {
      banner: bannerView(b, new Date()),
      bannerRules: disclosedBannerRules(appId, b.content),
      rulesVersion: disclosed.rulesVersion,
      rules: disclosed.rules,
      ruleInputs: disclosed.ruleInputs,
      longRunFeaturedShare: longRunFeaturedShare(rules),
      expectedPullsToFeatured: {
        withGuarantee: finite(expectedPullsToFeatured(resolved.table, { ...rules, guarantee: true })),
        withoutGuarantee: finite(expectedPullsToFeatured(resolved.table, { ...rules, guarantee: false })),
      },
      ...(standing
        ? {
            player: {
              ...standing,
              expectedPullsToFeatured: finite(
                expectedPullsToFeatured(resolved.table, rules, { pity: standing.pity, guaranteedFeatured: standing.guaranteedFeatured }),
              ),
            },
          }
        : {}),
    };
  });
}

import { createHash } from 'node:crypto';
import { AdminBannerStats, endpoint, expectedPullsToFeatured, longRunFeaturedShare, type BannerSimulationReport, type Queryable } from '@ccs/shared';
import { findBanner, type Banner } from '../banners/banners.js';
import { bannerErrors } from '../banners/errors.js';
import type { ChestsDeps } from '../deps.js';
import { rulesInput } from '../simulation/job.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { bannerView } from './banners.js';

/**
 * The simulation's size: 5 players × 1,000 single pulls for the shares, 200 players chasing the
 * first featured collectible (and with a spark, a chosen one): about 0.1 s for the demo banner
 * warm, 0.4 to 0.7 s cold on a busy two-core machine. It runs in a worker thread under the chest
 * simulator's bounds (deps.simulations), never on chests' event loop, once per app, banner and
 * rules version (kept in memory).
 */
export const BANNER_STATS_SIMULATION = { players: 5, pullsPerPlayer: 1_000, chasePlayers: 200 } as const;

/**
 * Simulations already run, by app, banner, rules version and banner content: the run is a pure
 * function of them (seeded), so a repeat costs nothing on the event loop. Oldest dropped past 100.
 */
const simulations = new Map<string, Promise<BannerSimulationReport>>();
const SIMULATIONS_KEPT = 100;

/** 1.959964: the normal quantile of a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

/** A proportion k / n with its 95 % Wilson score interval (bounds null when n = 0). */
export function wilson(k: number, n: number): { share: number; low: number | null; high: number | null } {
  if (n === 0) return { share: 0, low: null, high: null };
  const p = k / n;
  const z2 = Z95 * Z95;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { share: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** What the app's kept openings of a banner and its spark tables recorded (index openings_chest_type, then the banner). */
async function realPulls(db: Queryable, appId: string, b: Banner) {
  const params = [appId, b.chestTypeId, b.id];
  const ofBanner = `o.app_id = $1 AND o.chest_type_id = $2 AND o.banner->>'bannerId' = $3`;
  const [openings, items, exchanges, sparks] = await Promise.all([
    db.query<{ pulls: number; players: number; since: Date | null; guarantees: number; rerolls: number }>(
      `SELECT count(*)::int AS pulls, count(DISTINCT o.player_id)::int AS players, min(o.opened_at) AS since,
              count(*) FILTER (WHERE (o.banner->>'guaranteedBefore')::boolean AND (o.banner->>'featured')::boolean)::int AS guarantees,
              count(*) FILTER (WHERE (o.banner->>'floorRerolled')::boolean)::int AS rerolls
         FROM openings o WHERE ${ofBanner}`,
      params,
    ),
    db.query<{ rarity: string; collectible: string; n: number }>(
      `SELECT it->>'rarity' AS rarity, it->>'collectibleId' AS collectible, count(*)::int AS n
         FROM openings o CROSS JOIN LATERAL jsonb_array_elements(o.items) it
        WHERE ${ofBanner}
        GROUP BY 1, 2`,
      params,
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM spark_exchanges WHERE app_id = $1 AND banner = $2', [appId, b.id]),
    // Spark points are the pity group's (carried across its banners): held and settled in the group.
    db.query<{ settled: number; settled_players: number; held: number }>(
      `SELECT coalesce(sum(settled_points), 0)::int AS settled,
              count(*) FILTER (WHERE settled_points > 0)::int AS settled_players,
              coalesce(sum(spark_points), 0)::int AS held
         FROM banner_standings WHERE app_id = $1 AND pity_group = $2`,
      [appId, b.group],
    ),
  ]);
  const o = openings.rows[0]!;
  const featured = b.content.featured;
  const listed = new Set(featured.collectibles);
  const counts = new Map(featured.collectibles.map((id) => [id, 0]));
  let total = 0;
  let ofRarity = 0;
  for (const r of items.rows) {
    total += r.n;
    if (r.rarity !== featured.rarity) continue;
    ofRarity += r.n;
    if (listed.has(r.collectible)) counts.set(r.collectible, counts.get(r.collectible)! + r.n);
  }
  const featuredItems = [...counts.values()].reduce((s, n) => s + n, 0);
  const s = sparks.rows[0]!;
  return {
    pulls: o.pulls,
    players: o.players,
    since: o.since?.toISOString() ?? null,
    items: total,
    featuredRarityItems: ofRarity,
    featuredItems,
    featuredShare: wilson(featuredItems, ofRarity),
    collectibles: [...counts].map(([id, count]) => ({ id, count })),
    guaranteesUsed: o.guarantees,
    floorRerolls: o.rerolls,
    sparkExchanges: exchanges.rows[0]!.n,
    pointsSettled: s.settled,
    playersSettled: s.settled_players,
    pointsHeld: s.held,
  };
}

/**
 * Admin API (a banner's stats): its real pulls, what it discloses and a seeded simulation of it,
 * side by side. The simulation rolls the rules its pulls roll (the chest type's current rules) with
 * the production pull (simulateBanner), seeded by the banner's id so that two calls agree. Reads only.
 */
export function adminBannerStatsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminBannerStats, async (req) => {
    const b = await findBanner(deps, req.appId, req.bannerId);
    if (!b) throw bannerErrors.bannerNotFound();
    // Not catalog-only: a content version applied meanwhile may have left the chest type out.
    const type = await findChestType(deps.pool, req.appId, b.chestTypeId, { catalogOnly: false });
    if (!type) throw bannerErrors.bannerNotFound();
    const [resolved, real] = await Promise.all([deps.drops.resolve(req.appId, type), realPulls(deps.pool, req.appId, b)]);
    const rules = { featured: b.content.featured, guarantee: b.content.guarantee, ten_pull_floor: b.content.ten_pull_floor };
    const seed = createHash('sha256').update(`banner-stats:${b.id}`).digest('hex');
    const key = `${req.appId}:${b.id}:${type.contentVersion}:${resolved.content.version}:${JSON.stringify(b.content)}`;
    let pending = simulations.get(key);
    if (!pending) {
      pending = deps.simulations.runBanner(req.appId, {
        kind: 'banner',
        ...rulesInput(resolved.type.rules, resolved.content),
        banner: rules,
        size: BANNER_STATS_SIMULATION,
        seed,
        ...(b.content.spark ? { spark: { cost: b.content.spark.cost } } : {}),
      });
      simulations.set(key, pending);
      // A failed run (busy, overloaded, timed out) is not kept: the next call tries again.
      pending.catch(() => simulations.delete(key));
      if (simulations.size > SIMULATIONS_KEPT) simulations.delete(simulations.keys().next().value!);
    }
    const sim = await pending;
    return {
      banner: bannerView(b, new Date()),
      chest: { slug: type.slug, name: type.name, rulesVersion: type.contentVersion },
      chestTypeId: type.id,
      real,
      disclosed: {
        share: rules.featured.share,
        longRunShare: longRunFeaturedShare(rules),
        expectedPullsToFeatured: {
          withGuarantee: finite(expectedPullsToFeatured(resolved.table, { ...rules, guarantee: true })),
          withoutGuarantee: finite(expectedPullsToFeatured(resolved.table, { ...rules, guarantee: false })),
        },
      },
      simulation: {
        seed,
        players: sim.players,
        pullsPerPlayer: sim.pullsPerPlayer,
        pulls: sim.pulls,
        items: sim.items,
        featuredRarityItems: sim.featured.items,
        featuredItems: sim.featured.featured,
        featuredShare: wilson(sim.featured.featured, sim.featured.items),
        collectibles: sim.featured.collectibles.map((c) => ({ id: c.id, count: c.count })),
        firstFeatured: { mean: finite(sim.firstFeatured.simulatedMean), players: sim.firstFeatured.simulatedPlayers },
        spark: sim.spark,
      },
    };
  });
}

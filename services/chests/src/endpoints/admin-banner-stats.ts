import { createHash } from 'node:crypto';
import { AdminBannerStats, endpoint, expectedPullsToFeatured, longRunFeaturedShare, type BannerSimulationReport, type Queryable } from '@ccs/shared';
import { findBanner, type Banner } from '../banners/banners.js';
import { bannerErrors } from '../errors.js';
import type { ChestsDeps } from '../deps.js';
import { rulesInput } from '../simulation/job.js';
import { readBannerPullStats } from '../repositories/banners-repo.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { bannerView } from './banners.js';

/**
 * The simulation's size: 5 players × 1,000 single pulls for the shares, 200 players chasing the
 * first featured collectible (and with a spark, a chosen one): about 0.1 s for the demo banner
 * warm, 0.4 to 0.7 s cold on a busy two-core machine. It runs in a worker thread under the chest
 * simulator's bounds (deps.simulations), never on chests' event loop, once per app, banner and
 * rules version (kept in memory).
 */
const BANNER_STATS_SIMULATION = { players: 5, pullsPerPlayer: 1_000, chasePlayers: 200 } as const;

/**
 * Simulations already run, by app, banner, rules version and banner content: the run is a pure
 * function of them (seeded), so a repeat costs nothing on the event loop. Oldest dropped past 100.
 */
const simulations = new Map<string, Promise<BannerSimulationReport>>();
const SIMULATIONS_KEPT = 100;

/** 1.959964: the normal quantile of a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

/** A proportion k / n with its 95 % Wilson score interval (bounds null when n = 0). */
function wilson(k: number, n: number): { share: number; low: number | null; high: number | null } {
  if (n === 0) return { share: 0, low: null, high: null };
  const p = k / n;
  const z2 = Z95 * Z95;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { share: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** What the app's kept openings of a banner and its spark tables recorded, with the featured share's interval. */
async function realPulls(db: Queryable, appId: string, b: Banner) {
  const { openings: o, items, sparkExchanges, sparks: spark } = await readBannerPullStats(db, appId, b);
  const featured = b.content.featured;
  const listed = new Set(featured.collectibles);
  const counts = new Map(featured.collectibles.map((id) => [id, 0]));
  let total = 0;
  let ofRarity = 0;
  for (const r of items) {
    total += r.n;
    if (r.rarity !== featured.rarity) continue;
    ofRarity += r.n;
    if (listed.has(r.collectible)) counts.set(r.collectible, counts.get(r.collectible)! + r.n);
  }
  const featuredItems = [...counts.values()].reduce((s, n) => s + n, 0);
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
    sparkExchanges,
    pointsSettled: spark.settled,
    playersSettled: spark.settled_players,
    pointsHeld: spark.held,
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

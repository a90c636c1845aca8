import type { OpeningView } from '@ccs/shared';

/** An opening's pity state as clients see it (`null`: its chest has no pity). */
export const pityOf = (o: OpeningView) =>
  o.pity
    ? {
        group: o.pity.group,
        rarity: o.pity.rarity,
        opens_since_before: o.pity.opensSinceBefore,
        opens_since_after: o.pity.opensSinceAfter,
        triggered: o.pity.triggered,
      }
    : null;

/** An opening's commit-reveal inputs (`null` for openings made before verifiable randomness). */
export const fairnessOf = (o: OpeningView) =>
  o.fairness ? { server_seed_hash: o.fairness.serverSeedHash, client_seed: o.fairness.clientSeed, nonce: o.fairness.nonce } : null;

/** A banner pull's opening as clients see it (`meta.banner`; absent on other openings, so spread it). */
export const bannerOf = (o: OpeningView) =>
  o.banner
    ? {
        banner: {
          id: o.banner.bannerId,
          featured: o.banner.featured,
          guaranteed_before: o.banner.guaranteedBefore,
          spark_points_after: o.banner.sparkPointsAfter,
          floor_rerolled: o.banner.floorRerolled,
        },
      }
    : {};

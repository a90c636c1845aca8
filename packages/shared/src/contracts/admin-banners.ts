import { z } from 'zod';
import { UuidSchema } from './context.js';
import { BannerViewSchema } from './banners.js';
import { defineQuery } from './subject.js';

// Operator subject about a gacha banner (docs/design.md §8): its real pulls against what it discloses
// and what a seeded simulation of it measures.

/** A proportion with its 95 % Wilson score interval (null bounds before any trial). */
const ShareSchema = z.object({
  share: z.number().min(0).max(1),
  low: z.number().min(0).max(1).nullable(),
  high: z.number().min(0).max(1).nullable(),
});

/** Per featured collectible: how many of the featured items it was. */
const FeaturedCountSchema = z.object({ id: z.string(), count: z.number().int().min(0) });

/** Expected single pulls to a featured collectible; null when the banner can never give one. */
const ExpectedPullsSchema = z.number().nullable();

/**
 * chests: a banner's stats for the studio. `real`: what the app's kept banner openings of it
 * (openings.banner, OPENINGS_RETENTION_DAYS) and its spark tables recorded: pulls, players, items
 * of the featured rarity and the featured ones among them (observed share with a 95 % Wilson
 * interval), guarantees used (openings that started with the flag set and gave a featured item),
 * ten-pull floor re-rolls, spark exchanges and points settled at the banner's end. `disclosed`:
 * the banner's share, the long-run share with the guarantee, the exact expected pulls to a featured
 * collectible. `simulation`: simulateBanner on the rules its pulls roll, seeded (reproducible),
 * bounded to answer well under a second. 404 banner_not_found when the current content has no such
 * banner.
 */
export const AdminBannerStats = defineQuery(
  'chests.v1.admin_banner_stats',
  z.object({ appId: UuidSchema, bannerId: z.string().min(1).max(64) }),
  z.object({
    banner: BannerViewSchema,
    chest: z.object({ slug: z.string(), name: z.string(), rulesVersion: z.number().int() }),
    real: z.object({
      /** Banner openings kept (one per pull), and the players who made them. */
      pulls: z.number().int().min(0),
      players: z.number().int().min(0),
      /** The oldest opening counted (ISO 8601 UTC), null without any. */
      since: z.string().nullable(),
      items: z.number().int().min(0),
      /** Items of the featured rarity, and the featured ones among them. */
      featuredRarityItems: z.number().int().min(0),
      featuredItems: z.number().int().min(0),
      featuredShare: ShareSchema,
      collectibles: z.array(FeaturedCountSchema),
      /** Openings that began with the guarantee flag set and gave a featured collectible. */
      guaranteesUsed: z.number().int().min(0),
      floorRerolls: z.number().int().min(0),
      sparkExchanges: z.number().int().min(0),
      /** Spark points of the banner's pity group settled after its banners ended (converted to spark.currency, or lapsed), and the players they were settled for. */
      pointsSettled: z.number().int().min(0),
      playersSettled: z.number().int().min(0),
      /** Spark points players hold in the banner's pity group now (not yet exchanged or settled). */
      pointsHeld: z.number().int().min(0),
    }),
    disclosed: z.object({
      share: z.number(),
      longRunShare: z.number(),
      expectedPullsToFeatured: z.object({ withGuarantee: ExpectedPullsSchema, withoutGuarantee: ExpectedPullsSchema }),
    }),
    simulation: z.object({
      seed: z.string(),
      players: z.number().int(),
      pullsPerPlayer: z.number().int(),
      pulls: z.number().int(),
      items: z.number().int(),
      featuredRarityItems: z.number().int(),
      featuredItems: z.number().int(),
      featuredShare: ShareSchema,
      collectibles: z.array(FeaturedCountSchema),
      /** Single pulls to the first featured collectible from a fresh standing: the simulated players' mean. */
      firstFeatured: z.object({ mean: ExpectedPullsSchema, players: z.number().int() }),
      /** Pulls until the first featured collectible drops, and bounded by the spark's cost; the share of players who reach the cost first. Null without a spark. */
      spark: z
        .object({
          cost: z.number().int(),
          collectible: z.string(),
          withoutSpark: z.number(),
          withSpark: z.number(),
          sparked: z.number(),
          players: z.number().int(),
        })
        .nullable(),
    }),
    chestTypeId: UuidSchema,
  }),
  { callers: ['gateway'] },
);

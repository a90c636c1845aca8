import { z } from 'zod';
import { UuidSchema, type ReplyOf, AdminBannerStats } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, ResourceLinks, Timestamp } from './jsonapi.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/** Response schema of a banner's stats in the admin API (docs/design.md §8): real pulls, disclosed figures, a seeded simulation. */

const Share = z
  .object({
    share: z.number().min(0).max(1),
    low: z.number().min(0).max(1).nullable(),
    high: z.number().min(0).max(1).nullable(),
  })
  .describe(
    'Featured items among the items of the featured rarity, with its 95 % Wilson score interval (`low`, `high`; null before any item). The interval treats the items as independent draws; with the guarantee they are not quite (an off-banner item makes the next one featured), so read it as a guide.',
  );

const PerCollectible = z
  .array(z.object({ id: z.string().describe('A featured collectible.'), count: Count }))
  .describe('Each featured collectible, how many times it came.');

const ExpectedPulls = z.number().min(0).nullable();

/** A banner's stats for the studio. */
export const BannerStatsDocument = component(
  'BannerStatsDocument',
  "A gacha banner's real pulls, side by side with what it discloses and what a seeded simulation of it measures.",
  z.object({
    data: z.object({
      type: z.literal('banner_stats'),
      id: z.string().describe("The banner's id: its content slug."),
      attributes: z.object({
        banner: z
          .object({
            name: z.string(),
            starts_at: Timestamp,
            ends_at: Timestamp,
            active: z.boolean().describe('Whether it takes pulls now.'),
            featured: z.object({ rarity: z.string(), collectibles: z.array(z.string()), share: z.number() }),
            guarantee: z.boolean(),
            spark: z.object({ cost: z.number().int(), currency: z.string().nullable() }).nullable(),
            pity_group: z.string(),
            ten_pull_floor: z.string().nullable(),
          })
          .describe('The banner as the current content states it (GET /api/v1/banners/{id}).'),
        chest: z
          .object({ id: UuidSchema, slug: z.string(), name: z.string(), rules_version: z.number().int() })
          .describe('The chest type it pulls, and the content version of the rules its pulls roll now.'),
        real: z
          .object({
            pulls: Count.describe('Banner openings kept (one per pull; OPENINGS_RETENTION_DAYS).'),
            players: Count.describe('Players who made them.'),
            since: Timestamp.nullable().describe('The oldest opening counted; null without any.'),
            items: Count,
            featured_rarity_items: Count.describe('Items of the featured rarity.'),
            featured_items: Count.describe('Featured collectibles among them.'),
            featured_share: Share,
            collectibles: PerCollectible,
            guarantees_used: Count.describe('Openings that began with the guarantee flag set and gave a featured collectible.'),
            floor_rerolls: Count.describe("Ten-pulls whose tenth opening's last item the floor re-rolled."),
            spark_exchanges: Count,
            points_settled: Count.describe(
              "Spark points of the banner's pity group settled once its banners ended: converted to the last one's `spark.currency`, or lapsed without one.",
            ),
            players_settled: Count.describe('Players whose points were settled.'),
            points_held: Count.describe("Spark points players hold in the banner's pity group now (they carry across its banners)."),
          })
          .describe("What the app's real pulls of the banner recorded."),
        disclosed: z
          .object({
            share: z.number().describe('`featured.share`: the 50/50.'),
            long_run_share: z.number().describe('The long-run featured share: `share`, or 1 / (2 − share) with the guarantee.'),
            expected_pulls_to_featured: z
              .object({ with_guarantee: ExpectedPulls, without_guarantee: ExpectedPulls })
              .describe('Exact expected single pulls from a fresh standing to the first featured collectible (null: never).'),
          })
          .describe('What the banner odds document discloses (GET /api/v1/banners/{id}/odds).'),
        simulation: z
          .object({
            seed: z.string().describe("The server seed of the run (hex; fairRandom(seed, 'banner-stats', i)): every call runs the same."),
            players: Count,
            pulls_per_player: Count,
            pulls: Count,
            items: Count,
            featured_rarity_items: Count,
            featured_items: Count,
            featured_share: Share,
            collectibles: PerCollectible,
            first_featured: z
              .object({ mean: ExpectedPulls, players: Count })
              .describe("Single pulls from a fresh standing to the first featured collectible: the simulated players' mean."),
            spark: z
              .object({
                cost: z.number().int(),
                collectible: z.string().describe('The featured collectible chased (the first listed).'),
                without_spark: z.number().describe('Mean pulls until it drops.'),
                with_spark: z.number().describe("Mean pulls until it drops or the spark's cost is reached."),
                sparked: z.number().describe('Share of players who reached the cost first.'),
                players: Count,
              })
              .nullable()
              .describe('Null without a spark.'),
          })
          .describe(
            "A seeded simulation (the production pull) on the chest's current rules: players with a fresh standing making single pulls. Short histories read below the long-run share (each player's first item of the rarity is a plain 50/50).",
          ),
      }),
      links: ResourceLinks.describe('`self`: `/api/v1/admin/banners/{id}/stats`.'),
    }),
  }),
);

/** What `BannerStatsDocument` describes, as the gateway renders it. */
export type BannerStatsDocument = z.output<typeof BannerStatsDocument>;

/** A banner's stats: its real pulls against what it discloses, and a seeded simulation of it. */
export function bannerStatsDocument(s: Stats, base: string): z.output<typeof BannerStatsDocument> {
  const b = s.banner;
  return {
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
      links: selfLinks.bannerStats(base, b.id),
    },
  };
}

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

import { z } from 'zod';
import { UuidSchema, type BannerPlayer, type BannerView, type ReplyOf, GetBanner, GetBannerOdds } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, NoRelationships, ResourceLinks, Timestamp } from './jsonapi.js';
import { BannerStanding } from './banner-pulls.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/**
 * Response schemas of gacha banners (docs/design.md §8): the list, one banner, a banner's odds
 * document, with the functions that render them, typed by those schemas.
 */

const BannerId = z.string().describe("The banner's id: its content slug.");

const Featured = z
  .object({
    rarity: z.string().describe('The featured rarity.'),
    collectibles: z.array(z.string()).describe('The featured collectibles (collectible ids), in the order the featured roll draws from.'),
    share: z.number().gt(0).max(1).describe('Probability that an item of the featured rarity is featured (0.5: a 50/50).'),
  })
  .describe('The rate-up.');

/** The rate-up as the banner resource shows it: the rules' featured members, and the collectibles' names. */
const FeaturedNamed = Featured.extend({
  names: z.array(z.string()).describe('The featured collectibles\' names, in the order of `collectibles` (one name per id), e.g. `["Kraken"]`.'),
}).describe('The rate-up, with the names of its featured collectibles.');

const Spark = z
  .object({
    cost: z.number().int().min(1).describe('Spark points (one per pull) that buy one featured collectible of choice.'),
    currency: z.string().nullable().describe("What points left at the banner's end convert to; null: they lapse."),
  })
  .nullable()
  .describe('The spark; null when the banner has none.');

/** What the banner and its odds document share. */
const BannerMembers = {
  starts_at: Timestamp.describe('The window: pulls from `starts_at`…'),
  ends_at: Timestamp.describe('…up to, not including, `ends_at`.'),
  featured: Featured,
  guarantee: z
    .boolean()
    .describe("After an off-banner item of the featured rarity, the player's next one from banners of the same pity group is featured for certain."),
  spark: Spark,
  pity_group: z.string().describe('Banners of one group share the guarantee flag and the pity counter (the banner id when the content names none).'),
  ten_pull_floor: z.string().nullable().describe('A ten-pull gives at least one item of this rarity or better; null: no floor.'),
};

/** The caller's standing in a banner's pity group (one definition: the pull's answer shows the same). */
const PlayerStanding = BannerStanding.shape;

/** A change of a banner's rules announced under the odds change notice period. */
const BannerOddsChange = z
  .object({
    effective_at: Timestamp.describe('When the new rules take effect (the odds log entry of the change says the same).'),
    rules_version: z.number().int().min(1).describe("The banner rules version of the coming rules (its odds log entry's `rules_version`)."),
  })
  .describe(
    "A change of the banner's rules (chest, pity group, featured, guarantee, ten-pull floor) announced under the app's odds change notice period (content `compliance.odds_change_notice_hours`): until `effective_at` pulls roll the rules in force, which the attributes show; absent when none is pending.",
  );

const BannerMeta = z
  .object({
    player: z.object(PlayerStanding).optional().describe("With a Bearer token: the caller's standing on the banner."),
    odds_change: BannerOddsChange.optional(),
  })
  .describe('With a Bearer token, `player`; while a change of its rules is announced, `odds_change`; empty otherwise.');

/** The banner's rules as the odds log hashes them. */
const BannerRules = z
  .object({
    chest_type_id: UuidSchema.describe('The catalog chest pulled.'),
    pity_group: z.string().describe('The pity group whose flag and counter the pulls carry.'),
    featured: Featured,
    guarantee: z.boolean(),
    ten_pull_floor: z.string().nullable(),
  })
  .describe(
    "The banner's rules in force: everything in the banner that changes what a pull rolls. The odds log's banner entry of `banner_rules_version` has `rules_sha256` = SHA-256 of their canonical JSON (keys sorted).",
  );

/** A gacha banner. */
export const Banner = component(
  'Banner',
  "A gacha banner (docs/design.md §8): a time-limited way to pull its chest type (`relationships.chest_type`, a catalog chest), with a featured rate-up, a guarantee carried over within the pity group, a spark and a ten-pull floor. With a Bearer token, `meta.player` is the caller's standing.",
  z.object({
    type: z.literal('banner'),
    id: BannerId,
    attributes: z.object({
      name: z.string(),
      ...BannerMembers,
      featured: FeaturedNamed,
      active: z.boolean().describe('Whether it takes pulls now.'),
      price_per_pull: z
        .record(z.string(), z.number().int())
        .describe(
          'What one pull costs per currency code (its chest type\'s catalog price), e.g. `{"coins": 1000, "gems": 25}`: a pull of `count` costs `count` times it in the currency the pull names. Empty when the chest type is not on sale.',
        ),
    }),
    relationships: z.object({
      chest_type: z.object({ data: z.object({ type: z.literal('chest'), id: UuidSchema.describe('The catalog chest it pulls.') }) }),
    }),
    links: ResourceLinks.describe('`self`: `/api/v1/banners/{id}`.'),
    meta: BannerMeta,
  }),
);

/** The active and coming banners. */
export const BannerListDocument = component(
  'BannerListDocument',
  "The app's active and coming banners (those whose `ends_at` is ahead), in content order; an ended banner is not listed.",
  z.object({ data: z.array(Banner), meta: z.object({ total_count: Count }) }),
);

/** One banner. */
export const BannerDocument = component('BannerDocument', 'One banner (an ended one too).', z.object({ data: Banner }));

const ExpectedPulls = z.number().min(0).nullable();

/** A banner's odds document (docs/fairness.md, "Banner pulls"). */
export const BannerOddsDocument = component(
  'BannerOddsDocument',
  'Everything a banner pull depends on besides the seeds (docs/fairness.md, "Banner pulls"): the banner\'s rules in force (`banner_rules`, their version, and a pending change in `meta.odds_change`), its featured roll, guarantee, spark and ten-pull floor, and its chest type\'s `rules` and `rule_inputs` at `rules_version` (what `GET /chests/{chest_type_id}/odds?rules_version=` gives), so that `scripts/verify-opening.mjs --banner` recomputes a banner opening from this document alone.',
  z.object({
    data: z.object({
      type: z.literal('banner_odds'),
      id: BannerId,
      attributes: z.object({
        chest_type_id: UuidSchema.describe('The catalog chest the banner pulls.'),
        rules_version: z.number().int().min(1).describe("The content version of the chest's rules its pulls roll now."),
        banner_rules_version: z
          .number()
          .int()
          .min(1)
          .describe("The version of the banner's rules its pulls roll now (the content version that last changed them: its odds log entry's)."),
        banner_rules: BannerRules,
        ...BannerMembers,
        long_run_featured_share: z
          .number()
          .min(0)
          .max(1)
          .describe(
            'The share of featured collectibles among items of the featured rarity in the long run: `share`, or 1 / (2 − share) with the guarantee.',
          ),
        expected_pulls_to_featured: z
          .object({
            with_guarantee: ExpectedPulls,
            without_guarantee: ExpectedPulls,
          })
          .describe(
            'The exact expected number of single pulls from a fresh standing to the first featured collectible, as if the banner had the guarantee and as if it had not (null: never).',
          ),
        rules: z.record(z.string(), z.unknown()).describe("The chest's published rules of that version, as its odds document gives them."),
        rule_inputs: z
          .object({
            rarities: z.array(z.object({ id: z.string(), drop_rate: z.number(), rank: z.number().int() })),
            collectibles: z.array(z.object({ id: z.string(), collection_id: z.string(), rarity: z.string() })),
          })
          .describe("What the rules are read against: the version's rarities, and the collectibles of the chest's pool in content order."),
      }),
      relationships: NoRelationships,
      links: ResourceLinks.describe('`self`: `/api/v1/banners/{id}/odds`.'),
    }),
    meta: z
      .object({
        player: z
          .object({
            ...PlayerStanding,
            expected_pulls_to_featured: ExpectedPulls.describe(
              'Expected single pulls from the caller’s standing to their next featured collectible (null: never).',
            ),
          })
          .optional()
          .describe("With a Bearer token: the caller's standing on the banner."),
        odds_change: BannerOddsChange.optional(),
      })
      .describe('With a Bearer token, `player`; while a change of its rules is announced, `odds_change`; empty otherwise.'),
  }),
);

/** What `Banner` describes, as the gateway renders it. */
export type Banner = z.output<typeof Banner>;
/** What `BannerDocument` describes, as the gateway renders it. */
export type BannerDocument = z.output<typeof BannerDocument>;
/** What `BannerListDocument` describes, as the gateway renders it. */
export type BannerListDocument = z.output<typeof BannerListDocument>;
/** What `BannerOddsDocument` describes, as the gateway renders it. */
export type BannerOddsDocument = z.output<typeof BannerOddsDocument>;

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
export function bannerResource(b: ReplyOf<typeof GetBanner>, base: string): Banner {
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

/** Drops binary floating-point noise from a disclosed figure (as the chest odds do). */
const exact = (x: number | null): number | null => (x === null ? null : Number(x.toPrecision(15)));

/** The banner odds document (docs/fairness.md, "Banner pulls"); `meta.player` with the caller's standing. */
export function bannerOddsDocument(o: ReplyOf<typeof GetBannerOdds>, base: string): z.output<typeof BannerOddsDocument> {
  return {
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
      links: selfLinks.bannerOdds(base, o.banner.id),
    },
    meta: {
      ...(o.player ? { player: { ...standing(o.player), expected_pulls_to_featured: exact(o.player.expectedPullsToFeatured) } } : {}),
      ...oddsChange(o.banner),
    },
  };
}

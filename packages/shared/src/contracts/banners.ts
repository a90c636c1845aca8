import { z } from 'zod';
import { UuidSchema } from './context.js';
import { ChestDisclosureSchema } from './fairness.js';
import { defineQuery } from './subject.js';
import { BannerIdSchema as BannerId, BannerStandingViewSchema } from './banner-pulls.js';

/**
 * The read side of gacha banners (docs/design.md §8): the app's current and coming banners, one banner,
 * and its odds document (docs/fairness.md, "Banner pulls"). A banner's API id is its content slug.
 */

/**
 * A banner's rules as its odds document discloses them (`attributes.banner_rules`): what changes
 * what its pulls roll. The odds log's `rules_sha256` of a banner entry is SHA-256 of their
 * canonical JSON (docs/fairness.md, "The odds log"); the auditor's export carries them too.
 */
export const DisclosedBannerRulesSchema = z.object({
  /** The catalog id of the chest type pulled. */
  chest_type_id: UuidSchema,
  /** The pity group whose flag and counter the pulls carry (the slug when the content names none). */
  pity_group: z.string(),
  featured: z.object({ rarity: z.string(), collectibles: z.array(z.string()), share: z.number() }),
  guarantee: z.boolean(),
  ten_pull_floor: z.string().nullable(),
});
export type DisclosedBannerRules = z.infer<typeof DisclosedBannerRulesSchema>;

/** A pending change of a banner's rules: when it takes effect and its rules version (as catalog chests announce theirs). */
const OddsChangeSchema = z.object({ effectiveAt: z.string(), rulesVersion: z.number().int().min(1) });

/** A banner as the chests service shows it (collectibles named by their API ids, the chest type by its catalog id). */
export const BannerViewSchema = z.object({
  id: BannerId,
  name: z.string(),
  /** ISO 8601 UTC, as the content states them: pulls from `startsAt` up to, not including, `endsAt`. */
  startsAt: z.string(),
  endsAt: z.string(),
  /** Whether it takes pulls now. */
  active: z.boolean(),
  featured: z.object({ rarity: z.string(), collectibles: z.array(z.string()), share: z.number() }),
  guarantee: z.boolean(),
  /** Null: no spark. `currency` null: points left when the pity group's last banner ends lapse. */
  spark: z.object({ cost: z.number().int(), currency: z.string().nullable() }).nullable(),
  /** The group whose guarantee flag and pity counter its pulls carry (the slug when the content names none). */
  pityGroup: z.string(),
  tenPullFloor: z.string().nullable(),
  chestTypeId: UuidSchema,
  /** The version of the banner's rules in force (the content version that last changed them, as its odds log entry names it). */
  rulesVersion: z.number().int().min(1),
  /** A change of its rules waiting out the odds change notice period; absent when none. */
  oddsChange: OddsChangeSchema.optional(),
});
export type BannerView = z.infer<typeof BannerViewSchema>;

/** The caller's standing in a banner's pity group: pulls, spark points, the guarantee flag and the pity counter. */
export const BannerPlayerSchema = BannerStandingViewSchema;
export type BannerPlayer = z.infer<typeof BannerPlayerSchema>;

/**
 * A banner as the list and the one-banner read show it: with the names of its featured
 * collectibles, its price per pull and, for a caller with a token (ctx.playerId), their standing on it.
 */
const BannerWithPlayerSchema = BannerViewSchema.extend({
  /** The featured collectibles' names, in the order of `featured.collectibles` (the id where the content names none). */
  featuredNames: z.array(z.string()),
  /** What one pull costs per currency code: its chest type's catalog price (empty when the chest is not on sale). */
  pricePerPull: z.record(z.string(), z.number()),
  player: BannerPlayerSchema.optional(),
});

/** The active and coming banners of ctx.appId's current content (those whose `ends_at` is ahead), in content order. */
export const ListBanners = defineQuery('chests.v1.list_banners', z.object({}), z.object({ banners: z.array(BannerWithPlayerSchema) }), {
  callers: ['gateway'],
});

/** One banner of ctx.appId's current content (404 banner_not_found when unknown; an ended one is still found). */
export const GetBanner = defineQuery('chests.v1.get_banner', z.object({ bannerId: BannerId }), BannerWithPlayerSchema, {
  callers: ['gateway'],
});

/** Expected single pulls to the first featured collectible; null when the banner can never give one. */
const ExpectedPullsSchema = z.number().nullable();

/**
 * A banner's odds document: the banner and its rules in force (with their version and a pending
 * change, if any), its chest type's rules and rule inputs at the rules version its pulls roll (the
 * chest's odds disclosure), the long-run featured share and the expected pulls
 * to a featured collectible from a fresh standing, with and without the guarantee; with a token,
 * the caller's standing and the expected pulls from it. 404 banner_not_found when unknown.
 */
export const GetBannerOdds = defineQuery(
  'chests.v1.get_banner_odds',
  z.object({ bannerId: BannerId }),
  z.object({
    banner: BannerViewSchema,
    /** The banner's rules in force, as hashed in the odds log (`banner.rulesVersion` is their version). */
    bannerRules: DisclosedBannerRulesSchema,
    rulesVersion: z.number().int().min(1),
    rules: ChestDisclosureSchema.shape.rules,
    ruleInputs: ChestDisclosureSchema.shape.ruleInputs,
    longRunFeaturedShare: z.number(),
    expectedPullsToFeatured: z.object({ withGuarantee: ExpectedPullsSchema, withoutGuarantee: ExpectedPullsSchema }),
    player: BannerPlayerSchema.extend({ expectedPullsToFeatured: ExpectedPullsSchema }).optional(),
  }),
  { callers: ['gateway'] },
);

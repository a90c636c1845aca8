import { z } from 'zod';
import { DecimalSchema } from './context.js';
import { isCountryCode } from '../domain/countries.js';
import { checkReferences } from './content-references.js';
import { StoreContentSchema } from './store-content.js';

/**
 * The content of one app, as loaded from a content file. Each service stores the part it owns.
 * Chests, rarities and collections are added to this schema by the chests and collections work.
 */
export const CurrencyContentSchema = z.object({
  code: z.string().regex(/^[a-z][a-z0-9_]{1,31}$/),
  name: z.string().min(1).max(64),
  /** Largest amount a single credit may add. */
  max_credit: DecimalSchema.default('100000'),
  /** Counted in whole units (a key, a ticket): a credit of a fraction of it is refused (422 `amount_not_whole`). */
  whole: z.boolean().default(false),
});

export const PlayerRulesSchema = z.object({
  initial_currency: z.record(z.string(), z.number().int().min(0)),
  welcome_bonus: z.record(z.string(), z.number().int().min(0)),
  /** Chest type id (from the chests section) granted to every new player. */
  starter_chest_type: z.string().min(1),
  inventory_capacity: z.number().int().min(1).max(10_000).default(100),
  /**
   * Where a granted chest goes when the inventory is full (docs/content.md, "Overflow mailbox"):
   * `mailbox` keeps it there for `mailbox_ttl_days` until claimed; `refuse` adds it beyond the
   * capacity (grants are never lost either way; purchases beyond it are always refused). The
   * default keeps apps whose content predates the mailbox as they were.
   */
  inventory_overflow: z.enum(['refuse', 'mailbox']).default('refuse'),
  /** Days a chest waits in the mailbox before it expires unclaimed. */
  mailbox_ttl_days: z.number().int().min(1).max(365).default(30),
  /** Time-locked chests one player may have unlocking at once (docs/content.md, "Time-locked chests"). */
  unlock_slots: z.number().int().min(1).max(10).default(1),
  access_token_ttl_seconds: z.number().int().min(60).max(86_400).default(900),
  refresh_token_ttl_seconds: z
    .number()
    .int()
    .min(3600)
    .max(90 * 86_400)
    .default(30 * 86_400),
  /**
   * Whether players may credit their own balances of free currencies through the spec's credit
   * endpoint with the app's publishable key (the demo's content says so, for the spec's examples).
   * Off by default: a studio grants currency with its secret key (POST /api/v1/admin/players/{id}/credits).
   * Currencies in `compliance.paid_currencies` are never credited by players, whatever this says.
   */
  player_credit_allowed: z.boolean().default(false),
});

const Slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'lower-case letters, digits and dashes');

/** A rarity tier: its base drop rate (weight) and the experience one item of it gives. */
export const RarityContentSchema = z.object({
  id: Slug,
  name: z.string().min(1),
  /** Base drop rate as a fraction; the default weight of this rarity in every chest. */
  drop_rate: z.number().positive().max(1),
  experience: z.number().int().min(0),
  /** Order from most common (1) up; "rare or better" means rank >= rare's rank. */
  rank: z.number().int().min(1),
});

export const CollectibleContentSchema = z.object({
  id: Slug,
  name: z.string().min(1),
  description: z.string(),
  images: z.array(z.string().url()).default([]),
  rarity: Slug,
});

/**
 * What a player receives once, on first owning every collectible of a collection (docs/content.md,
 * "Collection rewards"): amounts of currencies and/or chests (by chest type id), at least one.
 */
export const CompletionRewardSchema = z
  .object({
    currencies: z.record(z.string(), z.number().int().min(1).max(1_000_000)).optional(),
    chests: z.array(Slug).min(1).max(10).optional(),
  })
  .strict()
  .refine((r) => Object.keys(r.currencies ?? {}).length > 0 || (r.chests?.length ?? 0) > 0, 'a reward gives currencies, chests or both');
export type CompletionReward = z.infer<typeof CompletionRewardSchema>;

export const CollectionContentSchema = z.object({
  id: Slug,
  name: z.string().min(1),
  description: z.string(),
  collectibles: z.array(CollectibleContentSchema).min(1),
  /** Granted once when a player first owns every collectible of it; absent: none. */
  completion_reward: CompletionRewardSchema.optional(),
});

/** Where a chest draws from: whole collections and/or explicit collectibles (their union). */
export const PoolSchema = z.union([z.object({ collection: Slug }).strict(), z.object({ collectibles: z.array(Slug).min(1) }).strict()]);

export const ChestRulesSchema = z.object({
  /** Items per open: fixed, or a uniform integer range. */
  items: z.union([
    z.object({ fixed: z.number().int().min(1).max(50) }).strict(),
    z.object({ min: z.number().int().min(1).max(50), max: z.number().int().min(1).max(50) }).strict(),
  ]),
  /** Weights per rarity for this chest; defaults to the rarities' drop rates. */
  rarity_weights: z.record(Slug, z.number().min(0)).optional(),
  pools: z.array(PoolSchema).min(1),
  /** Guaranteed slots: the first `count` items are drawn only from rarities ranked >= min_rarity. */
  guarantees: z.array(z.object({ min_rarity: Slug, count: z.number().int().min(1).max(10) })).default([]),
  /** Bonus rewards: with probability `chance`, `count` extra items of rank >= min_rarity. */
  bonus: z.array(z.object({ chance: z.number().min(0).max(1), count: z.number().int().min(1).max(10), min_rarity: Slug })).default([]),
  /** Bad-luck protection (docs/content.md, "Pity"); absent: none. */
  pity: z.lazy(() => PitySchema).optional(),
});

/**
 * Pity: per player and group, the counter is the number of openings since the last one that gave
 * an item of `rarity` or better. The opening made with the counter at `hard - 1` gives at least
 * one; from `soft_start` on, that rarity's share of every slot rises by `soft_step` per opening.
 */
export const PitySchema = z
  .object({
    rarity: Slug,
    hard: z.number().int().min(1).max(10_000),
    soft_start: z.number().int().min(1).max(10_000).optional(),
    soft_step: z.number().positive().max(1).optional(),
    /** Chest types with the same group share one counter; default: the chest type's own id. */
    group: Slug.optional(),
  })
  .strict()
  .refine((p) => (p.soft_start === undefined) === (p.soft_step === undefined), { message: 'soft_start and soft_step go together' })
  .refine((p) => p.soft_start === undefined || p.soft_start < p.hard, { message: 'soft_start must be below hard', path: ['soft_start'] });
export type PityRules = z.infer<typeof PitySchema>;

/**
 * Duplicate protection: a rolled collectible the player already holds `max_copies` of is
 * converted into `convert.currency`, `by_rarity[rarity]` of it (0 or absent: converted to nothing).
 */
export const DuplicatesSchema = z
  .object({
    max_copies: z.number().int().min(1).max(1_000_000),
    convert: z.object({ currency: z.string(), by_rarity: z.record(Slug, z.number().int().min(0)) }).strict(),
  })
  .strict();
export type DuplicatesRules = z.infer<typeof DuplicatesSchema>;

/**
 * ISO 3166-1 alpha-2 country code, upper case, and assigned: a blocked region such as `UK` (the
 * code is GB) would match no player, since players can only declare assigned codes.
 */
export const CountryCodeSchema = z
  .string()
  .regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 code in upper case, e.g. DE')
  .refine(isCountryCode, 'not an assigned ISO 3166-1 alpha-2 country code (e.g. GB, not UK)');

/** The rule packs shipped with the service (docs/design.md §7), one data file each. */
export const RULE_PACK_NAMES = ['BE', 'NL', 'BR', 'CN', 'KR', 'JP'] as const;
export const RulePackName = z.enum(RULE_PACK_NAMES);

/** An ISO 4217 alphabetic currency code (money as the stores report it), upper case. */
export const MoneyCodeSchema = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 currency code in upper case, e.g. CNY');

/**
 * One spend limit: at least one of `per_day`, `per_month` and `per_payment`. Without `money`, in
 * units of paid currency spent on paid random items; with `money` (an ISO 4217 code), in that money
 * paid in verified store transactions (transactions in other currencies converted by
 * `compliance.money_rates`).
 */
export const SpendLimitSchema = z
  .object({
    max_age: z.number().int().min(0).max(99),
    per_day: z.number().int().positive().max(1e12).optional(),
    per_month: z.number().int().positive().max(1e12).optional(),
    per_payment: z.number().int().positive().max(1e12).optional(),
    countries: z.array(CountryCodeSchema).min(1).optional(),
    money: MoneyCodeSchema.optional(),
  })
  .strict()
  .refine((l) => l.per_day !== undefined || l.per_month !== undefined || l.per_payment !== undefined, {
    message: 'a spend limit needs per_day, per_month or per_payment',
  });
export type SpendLimit = z.infer<typeof SpendLimitSchema>;

/**
 * Where and for whom paid chests are sold: buying with one of `paid_currencies` is refused to
 * players whose country is in `blocked_regions`, or who are younger than `min_age`.
 */
export const ComplianceSchema = z
  .object({
    paid_currencies: z.array(z.string()).default([]),
    blocked_regions: z.array(CountryCodeSchema).default([]),
    min_age: z.number().int().min(0).max(99).optional(),
    /**
     * Refuse "complete gacha" (docs/design.md §7; Japan, since 2012): content in which a collection
     * with a `completion_reward` holds a collectible that only chests costing a paid currency can
     * drop (422 `complete_gacha` at load, naming the collection and the collectibles).
     */
    forbid_complete_gacha: z.boolean().default(false),
    /**
     * Spend limits (docs/design.md §7): what players of at most `max_age` (where `countries` is given,
     * only there) may spend per UTC calendar day and month and per payment, in units of paid
     * currency spent on paid random items, or, with `money`, in money paid in verified store
     * transactions; past one → 403 `spend_limit_reached`, nothing debited or granted.
     */
    spend_limits: z.array(SpendLimitSchema).max(50).optional(),
    /**
     * Exchange rates for spend limits in money: `{<limit's money>: {<other currency>: rate}}`,
     * the rate being units of the limit's money per unit of the other currency (`{"CNY": {"USD":
     * 7.1}}`: 1 USD counts as 7.1 CNY). A store transaction in a currency a money limit holding the
     * player cannot convert is refused (403 `spend_limit_unverifiable`).
     */
    money_rates: z
      .record(MoneyCodeSchema, z.record(MoneyCodeSchema, z.number().positive().finite().max(1e9)))
      .refine((r) => Object.keys(r).length <= 20 && Object.values(r).every((x) => Object.keys(x).length <= 200), {
        message: 'at most 20 moneys of 200 rates each',
      })
      .optional(),
    /**
     * Notice period for odds changes (docs/design.md §7): new rules for an existing chest type take
     * effect this many hours after the load; until then the old ones roll and the catalog says
     * `meta.odds_change`.
     */
    odds_change_notice_hours: z
      .number()
      .int()
      .min(0)
      .max(90 * 24)
      .optional(),
    /** Shipped, versioned rule packs applied on top of these settings (packages/shared/compliance/packs). */
    rule_packs: z.array(RulePackName).max(RULE_PACK_NAMES.length).optional(),
  })
  .strict();
export type ComplianceRules = z.infer<typeof ComplianceSchema>;

/** A chest type's timer: how long it takes, and what skipping the rest costs per minute. */
export const UnlockRulesSchema = z
  .object({
    seconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400),
    skip: z
      .object({ currency: z.string(), per_minute: z.number().positive().max(1_000_000) })
      .strict()
      .optional(),
  })
  .strict();
export type UnlockRules = z.infer<typeof UnlockRulesSchema>;

/** A chest type of the catalog: presentation, price per currency code and drop rules. */
export const ChestTypeContentSchema = z.object({
  id: Slug,
  name: z.string().min(1),
  description: z.string(),
  images: z.array(z.string().url()).default([]),
  /** Price per currency code, integers; a currency it cannot be bought with is absent. */
  price: z.record(z.string(), z.number().int().positive()),
  rules: ChestRulesSchema,
  /**
   * A key the chest needs to open (docs/content.md, "Key-required chests"): `amount` of an
   * integer currency, debited when it opens; absent: no key.
   */
  requires_key: z
    .object({ currency: z.string(), amount: z.number().int().min(1).max(1000) })
    .strict()
    .optional(),
  /**
   * A timer the chest must run before it opens (docs/content.md, "Time-locked chests"): `seconds`
   * once started, or at once by paying `ceil(remaining minutes × per_minute)` of `skip.currency`;
   * without `skip` only the timer unlocks it. Absent: opens at once.
   */
  unlock: UnlockRulesSchema.optional(),
});

/**
 * A gacha banner (docs/design.md §8, docs/content.md "Banners"): a time-limited way to pull from a
 * chest type, whose items of `featured.rarity` are one of `featured.collectibles` with probability
 * `featured.share` (else an off-banner collectible of that rarity). With `guarantee`, the item of
 * that rarity after an off-banner one is featured for certain. Banners of one `pity_group` (default:
 * the banner's slug) share the player's guarantee flag, pity counter and spark points, and their
 * windows may not overlap unless each says `allow_overlap`. The roll: src/domain/banner.ts.
 */
export const BannerContentSchema = z
  .object({
    slug: Slug,
    name: z.string().min(1).max(128),
    /** The chest type (slug) pulled: its price per pull, its rules, pity included. */
    chest: Slug,
    /** The window, ISO 8601 UTC (`Z`): pulls are taken from `starts_at` up to, not including, `ends_at`. */
    starts_at: z.iso.datetime(),
    ends_at: z.iso.datetime(),
    featured: z
      .object({
        rarity: Slug,
        /** In draw order: the featured collectible is drawn uniformly from this list. */
        collectibles: z.array(Slug).min(1).max(100),
        /** Probability that an item of `rarity` is featured, in (0, 1]. */
        share: z.number().gt(0).max(1),
      })
      .strict(),
    guarantee: z.boolean(),
    /** Spark: after `cost` pulls in the pity group the player may take one featured collectible of choice; points left when the group's last banner ends convert to `currency`, if set. */
    spark: z
      .object({ cost: z.number().int().positive().max(100_000), currency: z.string().optional() })
      .strict()
      .optional(),
    pity_group: Slug.optional(),
    /** A ten-pull gives at least one item of this rarity or better. */
    ten_pull_floor: Slug.optional(),
    /** Whether this banner's window may overlap another's of the same pity group (both must say so). */
    allow_overlap: z.boolean().optional(),
  })
  .strict();
export type BannerContent = z.infer<typeof BannerContentSchema>;

/** What trading one rarity takes: whether its copies may be traded, and the tokens an offer and an accept each cost. */
export const TradeRaritySchema = z
  .object({
    tradable: z.boolean(),
    token_cost: z.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();

/**
 * Trade stamina: each offer spends one; one comes back every `regen_hours` (from server time) up to
 * `max`; with `refill`, a player may buy it back full for `amount` of `currency` (a paid path).
 */
export const TradeStaminaSchema = z
  .object({
    max: z.number().int().min(1).max(100),
    regen_hours: z
      .number()
      .int()
      .min(1)
      .max(30 * 24),
    refill: z
      .object({ currency: z.string(), amount: z.number().int().min(1).max(1_000_000) })
      .strict()
      .optional(),
  })
  .strict();

/**
 * Trading between players (docs/content.md, "Trading"): which rarities trade and at what token
 * cost, what dissolving a copy gives, stamina, how long an offer stays open, and the anti-abuse
 * rules (friends only, account age, offers per day).
 */
export const TradingSchema = z
  .object({
    enabled: z.boolean(),
    friends_only: z.boolean().default(true),
    same_rarity: z.boolean().default(true),
    /** Per rarity id; a rarity left out does not trade. */
    rarities: z.record(Slug, TradeRaritySchema),
    /** The currency trade tokens are kept in: what offers and accepts cost and dissolving gives. */
    token_currency: z.string().optional(),
    /** Tokens one dissolved copy of each rarity gives; a rarity left out cannot be dissolved. */
    dissolve: z.record(Slug, z.number().int().min(1).max(1_000_000)).optional(),
    /** Copies of a collectible that dissolving always leaves. */
    dissolve_keeps: z.number().int().min(0).max(1000).default(1),
    stamina: TradeStaminaSchema.optional(),
    offer_ttl_hours: z
      .number()
      .int()
      .min(1)
      .max(90 * 24)
      .default(72),
    min_account_age_hours: z
      .number()
      .int()
      .min(0)
      .max(365 * 24)
      .default(0),
    /** Offers one player may make per UTC day. */
    daily_offer_cap: z.number().int().min(1).max(10_000).default(20),
  })
  .strict();
export type TradingRules = z.infer<typeof TradingSchema>;

export const AppContentSchema = z
  .object({
    currencies: z.array(CurrencyContentSchema).min(1),
    players: PlayerRulesSchema,
    rarities: z.array(RarityContentSchema).min(1).default([]),
    collections: z.array(CollectionContentSchema).default([]),
    chests: z.array(ChestTypeContentSchema).default([]),
    duplicates: DuplicatesSchema.optional(),
    compliance: ComplianceSchema.optional(),
    /** Gacha banners (docs/design.md §8); absent: none. */
    banners: z.array(BannerContentSchema).max(200).optional(),
    /** Products sold in the App Store and Google Play, and what a refund takes back (docs/store.md); absent: none. */
    store: StoreContentSchema.optional(),
    /** Trading between players (docs/content.md, "Trading"); absent: no trading. */
    trading: TradingSchema.optional(),
  })
  .superRefine(checkReferences);
export type AppContent = z.infer<typeof AppContentSchema>;
export type ChestTypeContent = z.infer<typeof ChestTypeContentSchema>;
export type ChestRules = z.infer<typeof ChestRulesSchema>;
export type RarityContent = z.infer<typeof RarityContentSchema>;
export type CollectionContent = z.infer<typeof CollectionContentSchema>;

import { z } from 'zod';
import { DecimalSchema } from './context.js';
import { isCountryCode } from '../domain/countries.js';

/**
 * The content of one app, as loaded from a content file. Each service stores the part it owns.
 * Chests, rarities and collections are added to this schema by the chests and collections work.
 */
export const CurrencyContentSchema = z.object({
  code: z.string().regex(/^[a-z][a-z0-9_]{1,31}$/),
  name: z.string().min(1).max(64),
  /** Largest amount a single credit may add. */
  max_credit: DecimalSchema.default('100000'),
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

/**
 * Where and for whom paid chests are sold: buying with one of `paid_currencies` is refused to
 * players whose country is in `blocked_regions`, or who are younger than `min_age`.
 */
export const ComplianceSchema = z
  .object({
    paid_currencies: z.array(z.string()).default([]),
    blocked_regions: z.array(CountryCodeSchema).default([]),
    min_age: z.number().int().min(0).max(99).optional(),
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

export const AppContentSchema = z
  .object({
    currencies: z.array(CurrencyContentSchema).min(1),
    players: PlayerRulesSchema,
    rarities: z.array(RarityContentSchema).min(1).default([]),
    collections: z.array(CollectionContentSchema).default([]),
    chests: z.array(ChestTypeContentSchema).default([]),
    duplicates: DuplicatesSchema.optional(),
    compliance: ComplianceSchema.optional(),
  })
  .superRefine(checkReferences);
export type AppContent = z.infer<typeof AppContentSchema>;
export type ChestTypeContent = z.infer<typeof ChestTypeContentSchema>;
export type ChestRules = z.infer<typeof ChestRulesSchema>;
export type RarityContent = z.infer<typeof RarityContentSchema>;
export type CollectionContent = z.infer<typeof CollectionContentSchema>;

/** Whether a chest's pool holds a collectible ranked at or above `rarity`. */
function poolReaches(
  c: { rarities: { id: string; rank: number }[]; collections: CollectionContent[] },
  ch: ChestTypeContent,
  rarity: string,
): boolean {
  const rank = new Map(c.rarities.map((r) => [r.id, r.rank]));
  const min = rank.get(rarity) ?? Number.POSITIVE_INFINITY;
  const listed = new Set(ch.rules.pools.flatMap((p) => ('collectibles' in p ? p.collectibles : [])));
  const whole = new Set(ch.rules.pools.flatMap((p) => ('collection' in p ? [p.collection] : [])));
  return c.collections.some((col) => col.collectibles.some((it) => (whole.has(col.id) || listed.has(it.id)) && (rank.get(it.rarity) ?? 0) >= min));
}

/** Cross-references a content file must satisfy: every id it points at exists and is unique. */
function checkReferences(
  c: {
    rarities: { id: string; rank: number }[];
    collections: CollectionContent[];
    chests: ChestTypeContent[];
    currencies: { code: string; max_credit?: string }[];
    players: { starter_chest_type: string };
    duplicates?: DuplicatesRules;
    compliance?: ComplianceRules;
  },
  ctx: z.RefinementCtx,
): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const rarities = new Set(c.rarities.map((r) => r.id));
  const currencies = new Set(c.currencies.map((x) => x.code));
  const collections = new Set<string>();
  const collectibles = new Set<string>();
  c.collections.forEach((col, i) => {
    if (collections.has(col.id)) issue(['collections', i, 'id'], `duplicate collection ${col.id}`);
    collections.add(col.id);
    col.collectibles.forEach((it, j) => {
      if (collectibles.has(it.id)) issue(['collections', i, 'collectibles', j, 'id'], `duplicate collectible ${it.id}`);
      collectibles.add(it.id);
      if (!rarities.has(it.rarity)) issue(['collections', i, 'collectibles', j, 'rarity'], `unknown rarity ${it.rarity}`);
    });
    for (const [code, amount] of Object.entries(col.completion_reward?.currencies ?? {})) {
      const currency = c.currencies.find((x) => x.code === code);
      if (!currency) issue(['collections', i, 'completion_reward', 'currencies', code], `unknown currency ${code}`);
      // The wallet refuses a credit past the currency's max_credit: the reward could never be paid.
      else if (currency.max_credit !== undefined && Number(amount) > Number(currency.max_credit))
        issue(['collections', i, 'completion_reward', 'currencies', code], `${amount} exceeds the max_credit ${currency.max_credit} of ${code}`);
    }
  });
  const chestSlugs = new Set(c.chests.map((ch) => ch.id));
  c.collections.forEach((col, i) =>
    (col.completion_reward?.chests ?? []).forEach((slug, j) => {
      if (!chestSlugs.has(slug)) issue(['collections', i, 'completion_reward', 'chests', j], `unknown chest ${slug}`);
    }),
  );
  const chestIds = new Set<string>();
  c.chests.forEach((ch, i) => {
    if (chestIds.has(ch.id)) issue(['chests', i, 'id'], `duplicate chest ${ch.id}`);
    chestIds.add(ch.id);
    for (const code of Object.keys(ch.price)) if (!currencies.has(code)) issue(['chests', i, 'price', code], `unknown currency ${code}`);
    if (ch.requires_key && !currencies.has(ch.requires_key.currency))
      issue(['chests', i, 'requires_key', 'currency'], `unknown currency ${ch.requires_key.currency}`);
    const skip = ch.unlock?.skip;
    if (skip && !currencies.has(skip.currency)) issue(['chests', i, 'unlock', 'skip', 'currency'], `unknown currency ${skip.currency}`);
    const items = ch.rules.items;
    if ('min' in items && items.min > items.max) issue(['chests', i, 'rules', 'items'], 'min is above max');
    ch.rules.pools.forEach((p, j) => {
      if ('collection' in p && !collections.has(p.collection)) issue(['chests', i, 'rules', 'pools', j], `unknown collection ${p.collection}`);
      if ('collectibles' in p)
        for (const id of p.collectibles) if (!collectibles.has(id)) issue(['chests', i, 'rules', 'pools', j], `unknown collectible ${id}`);
    });
    for (const r of Object.keys(ch.rules.rarity_weights ?? {}))
      if (!rarities.has(r)) issue(['chests', i, 'rules', 'rarity_weights', r], `unknown rarity ${r}`);
    for (const g of [...ch.rules.guarantees, ...ch.rules.bonus])
      if (!rarities.has(g.min_rarity)) issue(['chests', i, 'rules'], `unknown rarity ${g.min_rarity}`);
    if (ch.rules.pity && !rarities.has(ch.rules.pity.rarity))
      issue(['chests', i, 'rules', 'pity', 'rarity'], `unknown rarity ${ch.rules.pity.rarity}`);
    else if (ch.rules.pity && !poolReaches(c, ch, ch.rules.pity.rarity)) {
      // The guarantee could never be honoured and the counter never reset.
      issue(['chests', i, 'rules', 'pity', 'rarity'], `the pool has no collectible of rarity ${ch.rules.pity.rarity} or better`);
    }
  });
  if (c.duplicates) {
    const { currency, by_rarity } = c.duplicates.convert;
    if (!currencies.has(currency)) issue(['duplicates', 'convert', 'currency'], `unknown currency ${currency}`);
    for (const r of Object.keys(by_rarity)) if (!rarities.has(r)) issue(['duplicates', 'convert', 'by_rarity', r], `unknown rarity ${r}`);
  }
  c.compliance?.paid_currencies.forEach((code, i) => {
    if (!currencies.has(code)) issue(['compliance', 'paid_currencies', i], `unknown currency ${code}`);
  });
  if (c.chests.length && !chestIds.has(c.players.starter_chest_type)) {
    issue(['players', 'starter_chest_type'], `unknown chest type ${c.players.starter_chest_type}`);
  }
}

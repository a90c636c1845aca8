import { z } from 'zod';
import { ChestRulesSchema } from './content.js';
import { UuidSchema } from './context.js';
import { defineQuery } from './subject.js';

// Operator subjects about a chest type's odds: the simulator's inputs and the observed drops.

/** A chest type named by id or by slug (the content's chest id), not both. */
const ChestNamedSchema = z
  .object({ appId: UuidSchema, chestTypeId: UuidSchema.optional(), slug: z.string().min(1).max(200).optional() })
  .refine((r) => (r.chestTypeId === undefined) !== (r.slug === undefined), { message: 'give chestTypeId or slug, not both' });

/**
 * A complete gacha a chest takes part in (docs/design.md §7, domain/complete-gacha.ts): a rewarded
 * collection some of whose collectibles only paid chests (`chests`, slugs) drop, and what to change.
 */
export const CompleteGachaSchema = z.object({
  collection: z.string(),
  collectibles: z.array(z.string()),
  chests: z.array(z.string()),
  advice: z.string(),
});

/**
 * chests: what the odds simulator (`npm run admin -- simulate`) needs to roll a chest type exactly
 * as openings do: its rules and the rarities and collectibles of the content version they belong
 * to. The type is named by id or by slug (the content's chest id); retired types are included.
 * 404 chest_not_found when the app has no such type (or no content yet).
 */
export const AdminDropInputs = defineQuery(
  'chests.v1.admin_drop_inputs',
  ChestNamedSchema,
  z.object({
    chestTypeId: UuidSchema,
    slug: z.string(),
    name: z.string(),
    inCatalog: z.boolean(),
    /** The content version the rules (and the rarities and collectibles below) belong to. */
    contentVersion: z.number().int(),
    rules: ChestRulesSchema,
    rarities: z.array(z.object({ id: z.string(), name: z.string(), drop_rate: z.number(), rank: z.number().int() })),
    collectibles: z.array(z.object({ id: z.string(), name: z.string(), collectionId: z.string(), rarity: z.string() })),
    /** The complete gachas this chest takes part in (CompleteGachaSchema); absent or empty: none. */
    completeGachas: z.array(CompleteGachaSchema).optional(),
  }),
  // The admin CLI's own simulator; the admin API's simulation asks chests.v1.admin_simulate.
  { callers: ['admin'] },
);

/**
 * chests: a chest type's observed drops against its disclosed odds. What real openings of the type
 * drew (its openings kept for OPENINGS_RETENTION_DAYS), items per rarity, against the long-run
 * share of each rarity under its current rules (pity included), with a chi-square p-value (null
 * before any item). The type is named by id or slug; 404 chest_not_found when the app has none.
 */
export const AdminChestDrops = defineQuery(
  'chests.v1.admin_chest_drops',
  ChestNamedSchema,
  z.object({
    chestTypeId: UuidSchema,
    chest: z.object({ slug: z.string(), name: z.string(), rulesVersion: z.number().int() }),
    openings: z.number().int().min(0),
    /** Items the openings drew. */
    items: z.number().int().min(0),
    /** The oldest opening counted (ISO 8601 UTC), null without any. */
    since: z.string().nullable(),
    /** Per rarity of the current rules, then any drawn that they no longer have (disclosed 0). */
    rarities: z.array(z.object({ rarity: z.string(), disclosed: z.number().min(0), observed: z.number().min(0), count: z.number().int().min(0) })),
    chiSquarePValue: z.number().nullable(),
  }),
  { callers: ['gateway', 'admin'] },
);

/** What real openings drew per rarity against the disclosed long-run shares (pity included). */
const ObservedRaritySchema = z.object({
  rarity: z.string(),
  disclosed: z.number().min(0),
  observed: z.number().min(0),
  count: z.number().int().min(0),
});

/**
 * chests.v1.observed_odds (public, docs/design.md §7 "Observed odds in public"): what the app's kept
 * openings of a catalog chest drew under one rules version (the current one by default), per
 * rarity, against the shares that version disclosed, with a chi-square p-value. Aggregates only.
 */
export const GetObservedOdds = defineQuery(
  'chests.v1.observed_odds',
  z.object({ chestTypeId: UuidSchema, rulesVersion: z.number().int().min(1).optional() }),
  z.object({
    chestTypeId: UuidSchema,
    rulesVersion: z.number().int().min(1),
    openings: z.number().int().min(0),
    items: z.number().int().min(0),
    since: z.string().nullable(),
    rarities: z.array(ObservedRaritySchema),
    chiSquarePValue: z.number().nullable(),
  }),
  { callers: ['gateway'] },
);

/**
 * One entry of an app's odds log (docs/design.md §7): a chest type's rules (`chestTypeId`) or a banner's
 * rules (`bannerId`, its slug), never both (docs/fairness.md, "The odds log").
 */
export const OddsLogEntrySchema = z
  .object({
    seq: z.number().int().min(1),
    chestTypeId: UuidSchema.optional(),
    bannerId: z.string().optional(),
    rulesVersion: z.number().int().min(1),
    rulesSha256: z.string().regex(/^[0-9a-f]{64}$/),
    effectiveAt: z.string(),
    previousHash: z.string().regex(/^[0-9a-f]{64}$/),
    entryHash: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .refine((e) => (e.chestTypeId === undefined) !== (e.bannerId === undefined), 'an entry names a chest type or a banner');
export type OddsLogEntryView = z.infer<typeof OddsLogEntrySchema>;

/**
 * An entry as the public log names its fields (GET /api/v1/odds-log's attributes, the auditor's
 * export, the offline verifier, the stored row): snake_case; a chest entry has `chest_type_id`, a
 * banner entry `banner_id` instead.
 */
export const oddsLogRecord = (e: OddsLogEntryView) => ({
  seq: e.seq,
  ...(e.bannerId === undefined ? { chest_type_id: e.chestTypeId! } : { banner_id: e.bannerId }),
  rules_version: e.rulesVersion,
  rules_sha256: e.rulesSha256,
  effective_at: e.effectiveAt,
  previous_hash: e.previousHash,
  entry_hash: e.entryHash,
});

/**
 * chests.v1.odds_log (public): one page of the app's append-only, hash-chained odds log, oldest
 * first: an entry per chest type or banner whose rules a content version changed.
 */
export const ListOddsLog = defineQuery(
  'chests.v1.odds_log',
  z.object({ page: z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) }) }),
  z.object({ entries: z.array(OddsLogEntrySchema), total: z.number().int().min(0) }),
  { callers: ['gateway'] },
);

/** Observed against disclosed shares of one rarity in a simulation. */
const SimulatedRaritySchema = z.object({
  rarity: z.string(),
  /** The disclosed long-run share, pity included. */
  effective: z.number(),
  observed: z.number(),
  count: z.number().int().min(0),
  /** Null where it is infinite (a count where none was expected: JSON has no infinity), as the route rendered it before. */
  deviation: z.number().nullable(),
});

/**
 * chests: the odds simulator on a chest type's current rules (the production roll and pity code):
 * observed against disclosed shares per rarity, chi-square p-values and what pity did. Runs in a
 * worker thread of chests, at most one per app at a time across replicas (429 simulation_busy with
 * meta.retry_after_seconds), a few at once per replica (503 overloaded), stopped after
 * SIMULATION_TIMEOUT_MS (503 simulation_timeout). 404 chest_not_found as admin_drop_inputs.
 */
export const AdminSimulate = defineQuery(
  'chests.v1.admin_simulate',
  z
    .object({
      appId: UuidSchema,
      chestTypeId: UuidSchema.optional(),
      slug: z.string().min(1).max(200).optional(),
      opens: z.number().int().min(1).max(100_000),
      /** Hex: the run draws from fairRandom(seed, 'simulate', i) and is reproducible; else from the CSPRNG. */
      seed: z
        .string()
        .regex(/^(?:[0-9a-f]{2}){1,64}$/)
        .optional(),
    })
    .refine((r) => (r.chestTypeId === undefined) !== (r.slug === undefined), { message: 'give chestTypeId or slug, not both' }),
  z.object({
    chestTypeId: UuidSchema,
    chest: z.object({ slug: z.string(), name: z.string(), rulesVersion: z.number().int() }),
    opens: z.number().int(),
    items: z.number().int(),
    rarities: z.array(SimulatedRaritySchema),
    chiSquarePValue: z.object({ rarities: z.number(), collectibles: z.number() }),
    pity: z
      .object({
        rarity: z.string(),
        hard: z.number().int(),
        hits: z.number().int(),
        guaranteed: z.number().int(),
        meanGap: z.number(),
        expectedMeanGap: z.number(),
      })
      .nullable(),
    /** The complete gachas this chest takes part in (CompleteGachaSchema); absent or empty: none. */
    completeGachas: z.array(CompleteGachaSchema).optional(),
  }),
  { callers: ['gateway', 'admin'] },
);

import { z } from 'zod';
import { ChestRulesSchema, DuplicatesSchema } from './content.js';
import { UuidSchema } from './context.js';
import { defineQuery, defineSubject } from './subject.js';

/** A client seed: what the player mixes into their rolls (docs/fairness.md). */
export const ClientSeedSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, '1 to 64 letters, digits, dots, dashes or underscores');

/** The active seed pair of ctx.playerId: the commitment, the client seed and the next nonce. */
export const FairnessViewSchema = z.object({
  serverSeedHash: z.string(),
  clientSeed: z.string(),
  /** The nonce the next opening uses. */
  nonce: z.number().int().min(0),
  algorithm: z.string(),
});

/** A revealed seed pair: everything needed to recompute its openings. */
export const RevealedSeedSchema = z.object({
  serverSeed: z.string(),
  serverSeedHash: z.string(),
  clientSeed: z.string(),
  /** The nonce of the last opening made with the pair; null when it made none. */
  lastNonce: z.number().int().min(0).nullable(),
});

/** ctx.playerId's active seed pair (one is committed on first use). */
export const GetFairness = defineQuery('chests.v1.get_fairness', z.object({}), FairnessViewSchema, { callers: ['gateway'] });

/**
 * Reveals ctx.playerId's active pair and commits a new server seed, with `clientSeed` when given
 * (the player sets it) or the same client seed (a rotation).
 */
export const RotateSeed = defineSubject(
  'chests.v1.rotate_seed',
  z.object({ clientSeed: ClientSeedSchema.optional() }),
  z.object({ fairness: FairnessViewSchema, revealed: RevealedSeedSchema }),
  { callers: ['gateway'] },
);

/** The pity rule of a chest type as disclosed, with its group. */
export const PityRuleViewSchema = z.object({
  rarity: z.string(),
  hard: z.number().int(),
  softStart: z.number().int().nullable(),
  softStep: z.number().nullable(),
  group: z.string(),
});

const RarityShareSchema = z.object({ rarity: z.string(), probability: z.number(), expectedCount: z.number() });

/**
 * What the odds endpoint adds for fair chests: the published rules of the version, the pity rule
 * with the long-run shares it gives, and the app's duplicate rules.
 */
export const ChestDisclosureSchema = z.object({
  rules: ChestRulesSchema,
  /**
   * What the rules are read against: the version's rarities, and the collectibles of the chest's
   * pool in content order (the draw order within a rarity). With the rules, all a verifier needs.
   */
  ruleInputs: z.object({
    rarities: z.array(z.object({ id: z.string(), drop_rate: z.number(), rank: z.number().int() })),
    collectibles: z.array(z.object({ id: z.string(), collection_id: z.string(), rarity: z.string() })),
  }),
  pity: PityRuleViewSchema.extend({ effectiveRarities: z.array(RarityShareSchema) }).nullable(),
  duplicates: DuplicatesSchema.nullable(),
});

/** ctx.playerId's odds for their next opening of a chest type, pity applied (null pity: the chest has none). */
export const GetPlayerOdds = defineQuery(
  'chests.v1.player_odds',
  z.object({ chestTypeId: UuidSchema }),
  z.object({
    opensSincePity: z.number().int().min(0).nullable(),
    guaranteedWithin: z.number().int().min(1).nullable(),
    rarities: z.array(RarityShareSchema),
  }),
  { callers: ['gateway'] },
);

/** ctx.playerId's pity counters, one per group of the current catalog's pity chests. */
export const ListPity = defineQuery(
  'chests.v1.list_pity',
  z.object({}),
  z.object({
    groups: z.array(
      z.object({
        group: z.string(),
        rarity: z.string(),
        opensSince: z.number().int().min(0),
        hard: z.number().int(),
        guaranteedWithin: z.number().int().min(1),
        chestTypeIds: z.array(UuidSchema),
      }),
    ),
  }),
  { callers: ['gateway'] },
);

/**
 * One of ctx.playerId's openings recomputed from its revealed seed: 404 opening_not_found (not
 * theirs, or unknown), 409 seed_not_revealed before its pair is rotated.
 */
export const VerifyOpening = defineQuery(
  'chests.v1.verify_opening',
  z.object({ openingId: UuidSchema }),
  z.object({
    openingId: UuidSchema,
    chestTypeId: UuidSchema,
    rulesVersion: z.number().int(),
    algorithm: z.string(),
    serverSeed: z.string(),
    serverSeedHash: z.string(),
    clientSeed: z.string(),
    nonce: z.number().int(),
    /** The pity counter the opening was made at (null: no pity). */
    opensSinceBefore: z.number().int().nullable(),
    rules: ChestRulesSchema,
    recomputed: z.array(z.object({ slot: z.number().int(), collectibleId: z.string(), rarity: z.string() })),
    matches: z.boolean(),
  }),
  { callers: ['gateway'] },
);

import { z } from 'zod';
import { OpeningViewSchema } from './chests.js';
import { SignedDecimalSchema, UuidSchema } from './context.js';
import { defineQuery, defineSubject } from './subject.js';

// Operator subjects about one player: finding them, their ledger and openings, granting them chests.

/** wallet: a player's latest ledger rows, newest first (every credit and debit with its reason and reference). */
export const AdminPlayerLedger = defineQuery(
  'wallet.v1.admin_player_ledger',
  z.object({ appId: UuidSchema, playerId: UuidSchema, limit: z.number().int().min(1).max(200) }),
  z.object({
    total: z.number().int().min(0),
    entries: z.array(
      z.object({
        at: z.string(),
        currency: z.string(),
        /** Signed: positive for a credit, negative for a debit. */
        delta: z.string(),
        /** Below zero while the player is in debt. */
        balanceAfter: SignedDecimalSchema,
        reason: z.string(),
        reference: z.string().nullable(),
      }),
    ),
  }),
  { callers: ['gateway', 'admin'] },
);

/**
 * players: one player of an app, by id or by email (404 player_not_found), with their declared
 * profile (personal data: for the studio's support, never logged) and whether the studio locked them.
 */
export const AdminFindPlayer = defineQuery(
  'players.v1.admin_find_player',
  z
    .object({ appId: UuidSchema, playerId: UuidSchema.optional(), email: z.string().min(1).max(320).optional() })
    .refine((r) => (r.playerId === undefined) !== (r.email === undefined), { message: 'give playerId or email, not both' }),
  z.object({
    playerId: UuidSchema,
    email: z.string().nullable(),
    isAnonymous: z.boolean(),
    createdAt: z.string(),
    /** ISO 3166-1 alpha-2, upper case; null when not declared. */
    country: z.string().nullable(),
    birthYear: z.number().int().nullable(),
    /** When the studio locked the player (ISO 8601 UTC); null while not locked. */
    lockedAt: z.string().nullable(),
  }),
  { callers: ['gateway', 'admin'] },
);

/** chests: a player's openings, newest first, for an operator (the audit of every roll). */
export const AdminListOpenings = defineQuery(
  'chests.v1.admin_list_openings',
  z.object({
    appId: UuidSchema,
    playerId: UuidSchema,
    page: z.object({ limit: z.number().int().min(1).max(1000), offset: z.number().int().min(0) }),
  }),
  z.object({ openings: z.array(OpeningViewSchema), total: z.number().int().min(0) }),
  { callers: ['gateway', 'admin'] },
);

/**
 * chests: an operator's grant of chests to a player (compensation, events), as durable ChestGrant
 * messages (source `special`): each lands in the inventory, or the overflow mailbox when it is
 * full. With a `reference` the chests' ids are derived from it, so granting again under the same
 * reference adds nothing (the chests service applies a chest id once) and answers `replayed`;
 * the same reference for another chest type or quantity → 409 reference_reused. A chest type the
 * app's current content does not have → 422 chest_type_not_found. Chests knows no players: the
 * caller asks players first (`players.v1.admin_find_player`: 404 player_not_found).
 */
export const AdminGrantChests = defineSubject(
  'chests.v1.admin_grant_chests',
  z.object({
    appId: UuidSchema,
    playerId: UuidSchema,
    /** The chest type: its slug in the content, or its catalog id (a UUID). */
    chestTypeId: z.union([z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/), UuidSchema]),
    quantity: z.number().int().min(1).max(100),
    reference: z
      .string()
      .regex(/^[\x21-\x7e]{1,100}$/)
      .optional(),
  }),
  z.object({
    playerId: UuidSchema,
    /** The chest type granted, by its slug. */
    chestType: z.string(),
    chests: z.array(UuidSchema),
    /** The reference had granted these chests before: nothing was sent now. */
    replayed: z.boolean(),
  }),
  { callers: ['gateway', 'admin'] },
);

/** One payment of a player as chests records it: chests bought, or a chest's key or timer skip paid for. */
export const AdminPaymentSchema = z.object({
  id: UuidSchema,
  kind: z.enum(['purchase', 'key', 'skip']),
  /** A purchase's chest type (its catalog id); null for a key or a skip. */
  chestTypeId: UuidSchema.nullable(),
  /** A purchase's number of chests; null for a key or a skip. */
  quantity: z.number().int().nullable(),
  /** A key's or a skip's chest (its inventory id); null for a purchase. */
  chestId: UuidSchema.nullable(),
  currency: z.string(),
  /** The price paid, a decimal string. */
  amount: z.string(),
  /** `completed` (paid and granted), `refunded`, `failed`, or under way (`pending`, `debited`, `compensating`). */
  status: z.enum(['pending', 'debited', 'completed', 'compensating', 'refunded', 'failed']),
  createdAt: z.string(),
});

/** chests: a player's payments (purchases, keys, timer skips), the newest first: what they bought, not the ledger's rows. */
export const AdminPlayerPayments = defineQuery(
  'chests.v1.admin_player_payments',
  z.object({ appId: UuidSchema, playerId: UuidSchema, limit: z.number().int().min(1).max(100) }),
  z.object({ payments: z.array(AdminPaymentSchema), total: z.number().int().min(0) }),
  { callers: ['gateway'] },
);

/**
 * What the compliance rules in force assume of a player because something is not declared: a
 * gate that refuses paid currencies (`refused`), or a spend limit that holds them (`spend_limit`)
 * only because the birth year (every age's limit holds) or the country (every country's) is
 * unknown. `rule` names the rule pack's rule behind it.
 */
export const ProfileAssumptionSchema = z.object({
  missing: z.array(z.enum(['country', 'birth_year'])).min(1),
  effect: z.enum(['refused', 'spend_limit']),
  /** A refusal's code. */
  code: z.enum(['blocked_in_region', 'age_restricted']).optional(),
  /** The age the player is treated as being under: a gate's minimum age, or one above a limit's `max_age`. */
  underAge: z.number().int().optional(),
  /** The countries the rule concerns (a pack's country; the blocked regions for the region gate). */
  countries: z.array(z.string()).optional(),
  /** A spend limit's period, amount and money (absent: units of paid currency on paid random items). */
  limit: z.object({ period: z.enum(['day', 'month', 'payment']), limit: z.number().int().min(0), money: z.string().optional() }).optional(),
  rule: z.object({ pack: z.string(), rule: z.string(), source: z.string() }).optional(),
});

/**
 * chests: what the compliance rules of the app's current content assume of a player who declared
 * `country` and `birthYear` (either may be null) because of what is missing; none when both are
 * declared or no rule reads them.
 */
export const AdminProfileAssumptions = defineQuery(
  'chests.v1.admin_profile_assumptions',
  z.object({ appId: UuidSchema, country: z.string().nullable(), birthYear: z.number().int().nullable() }),
  z.object({ assumptions: z.array(ProfileAssumptionSchema) }),
  { callers: ['gateway'] },
);

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

/** players: one player of an app, by id or by email (404 player_not_found). */
export const AdminFindPlayer = defineQuery(
  'players.v1.admin_find_player',
  z
    .object({ appId: UuidSchema, playerId: UuidSchema.optional(), email: z.string().min(1).max(320).optional() })
    .refine((r) => (r.playerId === undefined) !== (r.email === undefined), { message: 'give playerId or email, not both' }),
  z.object({ playerId: UuidSchema, email: z.string().nullable(), isAnonymous: z.boolean(), createdAt: z.string() }),
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
 * players: an operator's grant of chests to a player (compensation, events), as durable ChestGrant
 * messages (source `special`): each lands in the inventory, or the overflow mailbox when it is
 * full. With a `reference` the chests' ids are derived from it, so granting again under the same
 * reference adds nothing (the chests service applies a chest id once) and answers `replayed`;
 * the same reference for another chest type or quantity → 409 reference_reused. Unknown player →
 * 404 player_not_found.
 */
export const AdminGrantChests = defineSubject(
  'players.v1.admin_grant_chests',
  z.object({
    appId: UuidSchema,
    playerId: UuidSchema,
    /** The chest type id of the content (its slug). */
    chestTypeId: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
    quantity: z.number().int().min(1).max(100),
    reference: z
      .string()
      .regex(/^[\x21-\x7e]{1,100}$/)
      .optional(),
  }),
  z.object({
    playerId: UuidSchema,
    chests: z.array(UuidSchema),
    /** The reference had granted these chests before: nothing was sent now. */
    replayed: z.boolean(),
  }),
  { callers: ['admin'] },
);

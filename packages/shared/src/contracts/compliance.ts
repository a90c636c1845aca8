import { z } from 'zod';
import { UuidSchema } from './context.js';
import { defineEvent, defineQuery, defineSubject } from './subject.js';

/** The self-declared attributes the compliance gates read; null when the player has not given one. */
export const ComplianceProfileSchema = z.object({
  /** ISO 3166-1 alpha-2, upper case. */
  country: z
    .string()
    .regex(/^[A-Z]{2}$/)
    .nullable(),
  birthYear: z.number().int().nullable(),
});

/**
 * The calling player's (ctx.playerId) country and birth year, for the chests service's purchase
 * gates and the store's spend limits in money (internal: both ask players, which owns them).
 * Unknown player → 404 player_not_found.
 */
export const GetComplianceProfile = defineQuery('players.v1.compliance_profile', z.object({}), ComplianceProfileSchema, {
  callers: ['chests', 'store'],
});

/** Codes of a refused purchase with a paid currency (docs/content.md, "Compliance"). */
export const ComplianceCodeSchema = z.enum(['blocked_in_region', 'age_restricted']);

/**
 * Which currencies of the app's current content the calling player may not buy chests with, and
 * why: `refused` maps each such currency to its error code (every other currency is allowed);
 * `version` is the content version whose rules were applied (0 before the app's content arrived).
 * The gateway shows it as the catalog's `meta.purchasable`; never shared between callers.
 */
export const GetPurchaseRestrictions = defineQuery(
  'chests.v1.purchase_restrictions',
  z.object({}),
  z.object({ refused: z.record(z.string(), ComplianceCodeSchema), version: z.number().int().min(0) }),
  { callers: ['gateway'] },
);

/**
 * Core NATS notification (not durable) that a player's declared country or birth year changed,
 * by the player (`PATCH /api/v1/players/me`) or the studio (`PATCH /api/v1/admin/players/{id}`):
 * players publishes it after the commit and before it answers, and every gateway forgets the
 * purchase restrictions it kept for that player (PURCHASE_FLAGS_TTL_MS). A lost notice costs at
 * most that lifetime.
 */
export const ComplianceProfileChanged = defineEvent(
  'events.players.compliance_profile_changed',
  z.object({ appId: UuidSchema, playerId: UuidSchema }),
  // gateway: the catalog's purchase flags; store: the profiles its money limits keep.
  { publishers: ['players'], listeners: ['gateway', 'store'] },
);

/**
 * The studio changes a player's declared country and birth year (docs/content.md, "A declared
 * profile"), through `PATCH /api/v1/admin/players/{id}` with the secret key: neither the country
 * lock, the cooldown nor the birth-year rule applies (support corrects what a player cannot).
 * `null` clears an attribute; an absent one stays. Another app's player (or none) → 404
 * player_not_found; an invalid country or birth year → 422 pointing at it.
 */
export const AdminUpdatePlayerProfile = defineSubject(
  'players.v1.admin_update_profile',
  z.object({
    appId: UuidSchema,
    playerId: UuidSchema,
    country: z.string().max(100).nullable().optional(),
    birthYear: z.number().int().nullable().optional(),
  }),
  z.object({
    playerId: UuidSchema,
    country: z.string().nullable(),
    birthYear: z.number().int().nullable(),
    /** When the player last changed a declared country themselves (ISO 8601 UTC), null when never. */
    countryChangedAt: z.string().nullable(),
  }),
  { callers: ['gateway'] },
);

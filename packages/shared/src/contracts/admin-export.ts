import { z } from 'zod';
import { ChestRulesSchema } from './content.js';
import { UuidSchema } from './context.js';
import { OddsLogEntrySchema } from './admin-drops.js';
import { ChestDisclosureSchema } from './fairness.js';
import { BannerIdSchema } from './banner-pulls.js';
import { DisclosedBannerRulesSchema } from './banners.js';
import { defineQuery } from './subject.js';

// The auditor's export (docs/design.md §7): what `npm run admin -- export-audit` reads of chests, page
// by page. Operator subjects only: they carry revealed server seeds and every player's openings.

/** Most openings one page of the export answers. */
export const MAX_AUDIT_PAGE = 500;

/** One opening of the export: what it rolled, with the inputs to roll it again once its seed is revealed. */
export const AuditOpeningSchema = z.object({
  openingId: UuidSchema,
  playerId: UuidSchema,
  chestTypeId: UuidSchema,
  rulesVersion: z.number().int().min(1),
  /** ISO 8601 UTC. */
  openedAt: z.string(),
  items: z.array(z.object({ slot: z.number().int().min(0), collectibleId: z.string(), rarity: z.string() })),
  pity: z
    .object({
      group: z.string(),
      rarity: z.string(),
      opensSinceBefore: z.number().int().min(0),
      opensSinceAfter: z.number().int().min(0),
      triggered: z.boolean(),
    })
    .nullable(),
  /** Null for an opening made before verifiable randomness. */
  fairness: z
    .object({
      serverSeedHash: z.string(),
      clientSeed: z.string(),
      nonce: z.number().int().min(0),
      /** The server seed once its pair is revealed (rotated); null while it is still in use. */
      serverSeed: z.string().nullable(),
      revealedAt: z.string().nullable(),
    })
    .nullable(),
  /**
   * A banner pull's opening (docs/design.md §8): what it recorded of the banner, and the banner's rules
   * it rolled with (as the server's verification looks them up); null for other openings.
   */
  banner: z
    .object({
      bannerId: z.string(),
      featured: z.boolean(),
      guaranteedBefore: z.boolean(),
      floorRerolled: z.boolean(),
      /** The banner's rules version the pull rolled (its odds log entry's); null for openings recorded before banners were logged. */
      rulesVersion: z.number().int().min(1).nullable(),
      /**
       * The banner's rules at that version, as its odds document discloses them (their canonical
       * JSON's SHA-256 is the log entry's rules_sha256). Null when they cannot be found (the opening
       * cannot be re-rolled).
       */
      rules: DisclosedBannerRulesSchema.nullable(),
    })
    .nullable()
    .default(null),
});
export type AuditOpening = z.infer<typeof AuditOpeningSchema>;

/**
 * chests: one page of the app's openings made in [from, to), oldest first (opened_at, then id),
 * with their seeds where revealed. `cursor` is the previous page's `nextCursor` (null: the last
 * page). 404 app_not_found when chests has no content of the app.
 */
export const AdminExportOpenings = defineQuery(
  'chests.v1.admin_export_openings',
  z.object({
    appId: UuidSchema,
    from: z.iso.datetime({ offset: true }),
    to: z.iso.datetime({ offset: true }),
    cursor: z.string().max(200).optional(),
    limit: z.number().int().min(1).max(MAX_AUDIT_PAGE),
  }),
  z.object({ openings: z.array(AuditOpeningSchema), nextCursor: z.string().nullable() }),
  { callers: ['admin'] },
);

/**
 * chests: the rules of chest types at content versions, with what they are read against (as the
 * odds document with ?rules_version= publishes them); a pair chests cannot resolve is left out.
 */
export const AdminExportRules = defineQuery(
  'chests.v1.admin_export_rules',
  z.object({
    appId: UuidSchema,
    versions: z
      .array(z.object({ chestTypeId: UuidSchema, rulesVersion: z.number().int().min(1) }))
      .min(1)
      .max(100),
  }),
  z.object({
    rules: z.array(
      z.object({
        chestTypeId: UuidSchema,
        rulesVersion: z.number().int().min(1),
        rules: ChestRulesSchema,
        ruleInputs: ChestDisclosureSchema.shape.ruleInputs,
      }),
    ),
  }),
  { callers: ['admin'] },
);

/**
 * chests: the rules of banners at rules versions (as their odds log entries name them), as the
 * banner odds document discloses them; a pair chests cannot resolve is left out.
 */
export const AdminExportBannerRules = defineQuery(
  'chests.v1.admin_export_banner_rules',
  z.object({
    appId: UuidSchema,
    versions: z
      .array(z.object({ bannerId: BannerIdSchema, rulesVersion: z.number().int().min(1) }))
      .min(1)
      .max(100),
  }),
  z.object({
    rules: z.array(z.object({ bannerId: z.string(), rulesVersion: z.number().int().min(1), rules: DisclosedBannerRulesSchema })),
  }),
  { callers: ['admin'] },
);

/** chests: one page of an app's odds log, oldest first (chests.v1.odds_log, asked by an operator for an app). */
export const AdminOddsLog = defineQuery(
  'chests.v1.admin_odds_log',
  z.object({ appId: UuidSchema, page: z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) }) }),
  z.object({ entries: z.array(OddsLogEntrySchema), total: z.number().int().min(0) }),
  { callers: ['admin'] },
);

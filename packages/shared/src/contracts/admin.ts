import { z } from 'zod';
import { ChestRulesSchema } from './content.js';
import { OpeningViewSchema } from './chests.js';
import { DecimalSchema, UuidSchema } from './context.js';
import { defineQuery, defineSubject } from './subject.js';

// Operator subjects behind `npm run admin`: internal NATS only, never routed by the gateway.

/** Who may use a key: game clients (publishable) or the studio's servers (secret). */
export const ApiKeyKindSchema = z.enum(['publishable', 'secret']);

/** Longest grace period a rotation may give the old keys: 30 days. */
export const MAX_KEY_GRACE_SECONDS = 30 * 86_400;

/**
 * Issues new keys for an app (of the given kinds; by default every kind it has live keys of)
 * and schedules its old keys of those kinds to stop working `graceSeconds` from now (0: at once).
 */
export const AdminRotateKeys = defineSubject(
  'players.v1.admin_rotate_keys',
  z.object({
    appId: UuidSchema,
    kinds: z.array(ApiKeyKindSchema).min(1).max(2).optional(),
    graceSeconds: z.number().int().min(0).max(MAX_KEY_GRACE_SECONDS),
  }),
  z.object({
    appId: UuidSchema,
    /** The new keys, in clear: this answer is the only place they ever appear. */
    keys: z.array(z.object({ kind: ApiKeyKindSchema, key: z.string() })),
    /** The keys being retired and when each stops working (ISO 8601 UTC). */
    retired: z.array(z.object({ kind: ApiKeyKindSchema, createdAt: z.string(), revokedAt: z.string() })),
  }),
  { callers: ['admin'] },
);

/** One app as an operator lists it. */
export const AdminAppSummarySchema = z.object({
  appId: UuidSchema,
  name: z.string(),
  isDemo: z.boolean(),
  contentVersion: z.number().int(),
  /** ISO 8601 UTC. */
  createdAt: z.string(),
  players: z.number().int().min(0),
  /** Keys that work now (retiring keys still in their grace period included). */
  liveKeys: z.object({ publishable: z.number().int().min(0), secret: z.number().int().min(0) }),
});
export type AdminAppSummary = z.infer<typeof AdminAppSummarySchema>;

/** Every app, oldest first. */
export const AdminListApps = defineQuery('players.v1.admin_list_apps', z.object({}), z.object({ apps: z.array(AdminAppSummarySchema) }), {
  callers: ['admin'],
});

/** A count for the app asked about, and for the whole service (every app). */
const AppAndTotalSchema = z.object({ app: z.number().int().min(0), total: z.number().int().min(0) });

/** What every service reports about its durable messaging, besides its own figures. */
export const MessagingStatsSchema = z.object({
  /** Outbox rows not yet confirmed by JetStream. */
  outboxBacklog: AppAndTotalSchema,
  /** Age of the oldest unpublished outbox row of the service, in seconds (null: none). */
  outboxOldestAgeSeconds: z.number().min(0).nullable(),
  /** Durable messages given up after bounded retries, kept for an operator. */
  parked: AppAndTotalSchema,
});
export type MessagingStats = z.infer<typeof MessagingStatsSchema>;

const statsBase = {
  service: z.string(),
  /** The app's content version this service has applied (null: it has none yet). */
  contentVersion: z.number().int().nullable(),
  messaging: MessagingStatsSchema,
};
const StatsRequest = z.object({ appId: UuidSchema });

/** players: the app's name and players; 404 app_not_found for an unknown app. */
export const AdminPlayersStats = defineQuery(
  'players.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    app: z.object({ name: z.string(), isDemo: z.boolean(), createdAt: z.string() }),
    players: z.object({ total: z.number().int(), registered: z.number().int(), guests: z.number().int() }),
  }),
  { callers: ['gateway', 'admin'] },
);

/** wallet: balance totals per currency of the app. */
export const AdminWalletStats = defineQuery(
  'wallet.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    balances: z.array(z.object({ code: z.string(), name: z.string(), total: DecimalSchema, holders: z.number().int() })),
    /** Sources and sinks of the last 24 hours: per currency and ledger reason, what came in and what went out. */
    flows: z.array(z.object({ code: z.string(), reason: z.string(), credited: DecimalSchema, debited: DecimalSchema })).default([]),
  }),
  { callers: ['gateway', 'admin'] },
);

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
        balanceAfter: DecimalSchema,
        reason: z.string(),
        reference: z.string().nullable(),
      }),
    ),
  }),
  { callers: ['gateway', 'admin'] },
);

/** chests: chests owned and opened, recent openings, purchases. */
export const AdminChestsStats = defineQuery(
  'chests.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    chests: z.object({ unopened: z.number().int(), opened: z.number().int() }),
    openingsLast24h: z.number().int(),
    purchases: z.object({ completed: z.number().int(), unsettled: z.number().int(), refunded: z.number().int(), failed: z.number().int() }),
    /** The last 24 hours, hour by hour (oldest first, the current hour last): openings and completed purchases. */
    hourly: z.array(z.object({ hour: z.string(), openings: z.number().int(), purchases: z.number().int() })).default([]),
  }),
  { callers: ['gateway', 'admin'] },
);

/** collections: items granted from openings. */
export const AdminCollectionsStats = defineQuery(
  'collections.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    itemsGranted: z.number().int(),
    openingsGranted: z.number().int(),
    collectors: z.number().int(),
  }),
  { callers: ['gateway', 'admin'] },
);

/** A chest type named by id or by slug (the content's chest id), not both. */
const ChestNamedSchema = z
  .object({ appId: UuidSchema, chestTypeId: UuidSchema.optional(), slug: z.string().min(1).max(200).optional() })
  .refine((r) => (r.chestTypeId === undefined) !== (r.slug === undefined), { message: 'give chestTypeId or slug, not both' });

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
  }),
  { callers: ['gateway', 'admin'] },
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

/** The services that apply an app's content from the AppContentLoaded message. */
export const CONTENT_SERVICES = ['wallet', 'chests', 'collections'] as const;

/** The content version of an app a service has applied (cheap: for polling after a load). */
export const adminContentVersion = (service: string) =>
  defineQuery(
    `${service}.v1.admin_content_version`,
    z.object({ appId: UuidSchema }),
    z.object({ service: z.string(), contentVersion: z.number().int().nullable() }),
    { callers: ['admin'] },
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
 * reference adds nothing (the chests service applies a chest id once). Unknown player → 404
 * player_not_found.
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
  z.object({ playerId: UuidSchema, chests: z.array(UuidSchema) }),
  { callers: ['admin'] },
);

/** One entry of the admin API's audit log: who did what, to what, when, and how it ended. */
export const AuditEntrySchema = z.object({
  at: z.string(),
  /** Which credential: `secret key …<last 4 characters>`. */
  actor: z.string(),
  /** The operation, e.g. `GET /api/v1/admin/players/{id}`. */
  action: z.string(),
  /** What it was about (a player id or email), when it names something. */
  target: z.string().nullable(),
  status: z.number().int(),
  requestId: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** players: records one admin API call in the app's audit log (the gateway, after answering it). */
export const AdminRecordAudit = defineSubject(
  'players.v1.admin_record_audit',
  AuditEntrySchema.omit({ at: true }).extend({ appId: UuidSchema }),
  z.object({}),
  { callers: ['gateway'] },
);

/** players: the app's audit log, newest first. */
export const AdminListAudit = defineQuery(
  'players.v1.admin_list_audit',
  z.object({ appId: UuidSchema, page: z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) }) }),
  z.object({ entries: z.array(AuditEntrySchema), total: z.number().int().min(0) }),
  { callers: ['gateway', 'admin'] },
);

/** players: the app's stored content versions, newest first (versions loaded before storage began are absent). */
export const AdminListContentVersions = defineQuery(
  'players.v1.admin_content_versions',
  z.object({ appId: UuidSchema }),
  z.object({
    current: z.number().int().min(1),
    versions: z.array(
      z.object({
        version: z.number().int().min(1),
        loadedAt: z.string(),
        counts: z.object({
          currencies: z.number().int(),
          rarities: z.number().int(),
          collections: z.number().int(),
          collectibles: z.number().int(),
          chests: z.number().int(),
        }),
      }),
    ),
  }),
  { callers: ['gateway', 'admin'] },
);

/** The sections of a content file a diff compares. */
export const ContentSectionSchema = z.enum([
  'currencies',
  'rarities',
  'collections',
  'collectibles',
  'chests',
  'players',
  'duplicates',
  'compliance',
]);

/** What changed in one section of a content file between two versions (ids; `(rules)` for a section that is one item). */
export const ContentSectionDiffSchema = z.object({
  section: ContentSectionSchema,
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
});
export type ContentSectionDiff = z.infer<typeof ContentSectionDiffSchema>;

/**
 * players: what the app's current content changed from a stored version, section by section
 * (sections without a change left out); 404 content_version_not_found when either version is not stored.
 */
export const AdminContentDiff = defineQuery(
  'players.v1.admin_content_diff',
  z.object({ appId: UuidSchema, version: z.number().int().min(1) }),
  z.object({ fromVersion: z.number().int().min(1), toVersion: z.number().int().min(1), sections: z.array(ContentSectionDiffSchema) }),
  { callers: ['gateway'] },
);

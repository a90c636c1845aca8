import { z } from 'zod';
import { DecimalSchema, UuidSchema } from './context.js';
import { defineSubject } from './subject.js';

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
export const AdminListApps = defineSubject('players.v1.admin_list_apps', z.object({}), z.object({ apps: z.array(AdminAppSummarySchema) }));

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
export const AdminPlayersStats = defineSubject(
  'players.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    app: z.object({ name: z.string(), isDemo: z.boolean(), createdAt: z.string() }),
    players: z.object({ total: z.number().int(), registered: z.number().int(), guests: z.number().int() }),
  }),
);

/** wallet: balance totals per currency of the app. */
export const AdminWalletStats = defineSubject(
  'wallet.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    balances: z.array(z.object({ code: z.string(), name: z.string(), total: DecimalSchema, holders: z.number().int() })),
  }),
);

/** chests: chests owned and opened, recent openings, purchases. */
export const AdminChestsStats = defineSubject(
  'chests.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    chests: z.object({ unopened: z.number().int(), opened: z.number().int() }),
    openingsLast24h: z.number().int(),
    purchases: z.object({ completed: z.number().int(), unsettled: z.number().int(), refunded: z.number().int(), failed: z.number().int() }),
  }),
);

/** collections: items granted from openings. */
export const AdminCollectionsStats = defineSubject(
  'collections.v1.admin_stats',
  StatsRequest,
  z.object({
    ...statsBase,
    itemsGranted: z.number().int(),
    openingsGranted: z.number().int(),
    collectors: z.number().int(),
  }),
);

/** The services that apply an app's content from the AppContentLoaded message. */
export const CONTENT_SERVICES = ['wallet', 'chests', 'collections'] as const;

/** The content version of an app a service has applied (cheap: for polling after a load). */
export const adminContentVersion = (service: string) =>
  defineSubject(
    `${service}.v1.admin_content_version`,
    z.object({ appId: UuidSchema }),
    z.object({ service: z.string(), contentVersion: z.number().int().nullable() }),
  );

import { z } from 'zod';
import { DecimalSchema, SignedDecimalSchema, UuidSchema } from './context.js';
import { defineQuery } from './subject.js';

// Operator subjects: each service's figures for an app (`npm run admin -- stats`, the admin API).

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
    /** Per currency: the sum of all balances (debts count below zero) and how many players hold some. */
    balances: z.array(z.object({ code: z.string(), name: z.string(), total: SignedDecimalSchema, holders: z.number().int() })),
    /** Sources and sinks of the last 24 hours: per currency and ledger reason, what came in and what went out. */
    flows: z.array(z.object({ code: z.string(), reason: z.string(), credited: DecimalSchema, debited: DecimalSchema })).default([]),
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

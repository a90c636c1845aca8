import { z } from 'zod';
import {
  DecimalSchema,
  SignedDecimalSchema,
  UuidSchema,
  type ReplyOf,
  AdminPlayersStats,
  AdminChestsStats,
  AdminCollectionsStats,
  AdminWalletStats,
} from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, ResourceLinks, Timestamp } from './jsonapi.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/** Response schema of the admin API's app overview (`GET /api/v1/admin/overview`), with its renderer typed by it. */

const ContentVersions = z
  .object({ chests: Count.nullable(), collections: Count.nullable(), wallet: Count.nullable() })
  .describe('The content version each content service has applied (null: none yet).');

/** The app at a glance. */
export const AppOverviewDocument = component(
  'AppOverviewDocument',
  "The secret key's app at a glance: players, chests, openings, purchases, granted items and balances, and the content version each service applied.",
  z.object({
    data: z.object({
      type: z.literal('app_overview'),
      id: UuidSchema,
      attributes: z.object({
        name: z.string(),
        created_at: Timestamp,
        players: z.object({ total: Count, registered: Count, guests: Count }),
        chests: z.object({ unopened: Count, opened: Count }),
        openings_last_24h: Count,
        purchases: z.object({ completed: Count, unsettled: Count, refunded: Count, failed: Count }),
        items_granted: Count,
        collectors: Count.describe('Players who own at least one collectible.'),
        balances: z
          .array(z.object({ code: z.string(), name: z.string(), total: SignedDecimalSchema, holders: Count }))
          .describe("Per currency: the sum of all balances (players' debts count below zero) and how many players hold some."),
        currency_flows_24h: z
          .array(z.object({ code: z.string(), reason: z.string(), credited: DecimalSchema, debited: DecimalSchema }))
          .describe(
            'Sources and sinks of the last 24 hours: per currency and ledger reason (`credit`, `debit`, `welcome_bonus`, `duplicate_conversion`, `collection_reward`, …), what came in and went out.',
          ),
        hourly: z
          .array(z.object({ hour: Timestamp, openings: Count, purchases: Count }))
          .describe('The last 24 hours, hour by hour, oldest first: openings and completed purchases.'),
        content_versions: ContentVersions,
      }),
      links: ResourceLinks.describe('`self`: `/api/v1/admin/overview`.'),
    }),
  }),
);

/** What `AppOverviewDocument` describes, as the gateway renders it. */
export type AppOverviewDocument = z.output<typeof AppOverviewDocument>;

/** The app's overview: players, chests, openings, purchases, collections and balances, from each service's own figures. */
export function appOverviewDocument(
  appId: string,
  players: ReplyOf<typeof AdminPlayersStats>,
  chests: ReplyOf<typeof AdminChestsStats>,
  collections: ReplyOf<typeof AdminCollectionsStats>,
  wallet: ReplyOf<typeof AdminWalletStats>,
  base: string,
): z.output<typeof AppOverviewDocument> {
  return {
    data: {
      type: 'app_overview',
      id: appId,
      attributes: {
        name: players.app.name,
        created_at: players.app.createdAt,
        players: players.players,
        chests: chests.chests,
        openings_last_24h: chests.openingsLast24h,
        purchases: chests.purchases,
        items_granted: collections.itemsGranted,
        collectors: collections.collectors,
        balances: wallet.balances,
        currency_flows_24h: wallet.flows,
        hourly: chests.hourly,
        content_versions: { chests: chests.contentVersion, collections: collections.contentVersion, wallet: wallet.contentVersion },
      },
      links: selfLinks.appOverview(base),
    },
  };
}

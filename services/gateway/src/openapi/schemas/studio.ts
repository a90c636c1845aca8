import { z } from 'zod';
import { DecimalSchema, UuidSchema } from '@ccs/shared';
import { component } from '../components.js';
import { Count, PageMeta, PaginationLinks, Timestamp } from './jsonapi.js';

/** Response schemas of the admin API (the studio scope: the app's secret key). */

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
          .array(z.object({ code: z.string(), name: z.string(), total: DecimalSchema, holders: Count }))
          .describe('Per currency: the sum of all balances.'),
        content_versions: ContentVersions,
      }),
    }),
  }),
);

/** A player as support sees them. */
export const AdminPlayerDocument = component(
  'AdminPlayerDocument',
  'One player of the app with what support needs: inventory, balances, collection progress and latest openings.',
  z.object({
    data: z.object({
      type: z.literal('player'),
      id: UuidSchema,
      attributes: z.object({
        email: z.string().nullable(),
        is_anonymous: z.boolean(),
        created_at: Timestamp,
        inventory: z.object({
          total_chests: Count,
          chests: z.array(z.object({ id: UuidSchema, chest_type_id: UuidSchema, name: z.string(), source: z.string(), acquired_at: Timestamp })),
        }),
        balances: z.array(z.object({ code: z.string(), amount: DecimalSchema })),
        collections: z.array(
          z.object({ id: z.string(), name: z.string(), unique_items: Count, total_items: Count, completed_at: Timestamp.nullable() }),
        ),
        openings: z.object({
          total: Count,
          latest: z.array(
            z.object({
              id: UuidSchema,
              chest_type_id: z.string(),
              opened_at: Timestamp,
              rules_version: z.number().int(),
              items: z.array(z.object({ collectible_id: z.string(), rarity: z.string() })),
            }),
          ),
        }),
      }),
    }),
  }),
);

/** The audit log. */
export const AuditLogDocument = component(
  'AuditLogDocument',
  "The app's admin audit log, newest first: every call of the admin API, who made it, on what, when and how it ended.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('audit_entry'),
        id: z.string().describe('The request id of the call.'),
        attributes: z.object({
          at: Timestamp,
          actor: z.string().describe('The credential: `secret key …<last 4 characters>`.'),
          action: z.string().describe('The operation, e.g. `GET /api/v1/admin/players/{id}`.'),
          target: z.string().nullable().describe('What it was about (a player id or email), when it names something.'),
          status: z.number().int(),
        }),
      }),
    ),
    meta: z.object({ total_count: Count, page: PageMeta }),
    links: PaginationLinks,
  }),
);

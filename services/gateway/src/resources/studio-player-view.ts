import { z } from 'zod';
import { DecimalSchema, SignedDecimalSchema, UuidSchema, type ReplyOf, AdminFindPlayer } from '@ccs/shared';
import { component } from '../openapi/components.js';
import type { Records } from '../routes/v1/studio-player-lookup.js';
import { Count, ResourceLinks, Timestamp } from './jsonapi.js';
import { SpendLimitAttributes, spendLimitAttributes } from './spend-limits.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/** Response schema of a player as support sees them (`GET /api/v1/admin/players/{id}`), with its renderer typed by it. */

/** What the compliance rules assume of a player who has not declared their country or birth year. */
const ProfileAssumption = z.object({
  missing: z.array(z.enum(['country', 'birth_year'])).describe('What the player has not declared.'),
  effect: z
    .enum(['refused', 'spend_limit'])
    .describe('`refused`: paid currencies are refused on random items; `spend_limit`: a spend limit holds the player.'),
  code: z.enum(['blocked_in_region', 'age_restricted']).optional().describe("A refusal's error code."),
  under_age: z.number().int().optional().describe('The age the player is treated as being under.'),
  countries: z.array(z.string()).optional().describe("The countries the rule concerns (a rule pack's, or the blocked regions)."),
  limit: z
    .object({ period: z.enum(['day', 'month', 'payment']), limit: Count, money: z.string().optional() })
    .optional()
    .describe("A spend limit's period and amount; with `money`, in money paid at the stores, else in units of paid currency."),
  rule: z.object({ pack: z.string(), rule: z.string(), source: z.string() }).optional().describe('The rule pack rule behind it.'),
});

/** A player as support sees them. */
export const AdminPlayerDocument = component(
  'AdminPlayerDocument',
  'One player of the app with what support needs: the declared profile and what the rules assume for what is missing, the lock, sessions, inventory and mailbox, balances and the ledger, purchases, collection progress and latest openings.',
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
        balances: z.array(
          z.object({
            code: z.string(),
            amount: SignedDecimalSchema.describe('Below zero while the player is in debt (a store refund took back spent currency).'),
          }),
        ),
        ledger: z
          .object({
            total: Count,
            latest: z.array(
              z.object({
                at: Timestamp,
                currency: z.string(),
                delta: z.string().describe('Signed decimal: positive for a credit, negative for a debit.'),
                balance_after: SignedDecimalSchema,
                reason: z
                  .string()
                  .describe(
                    '`credit`, `debit`, `debit_refund`, `initial_currency`, `welcome_bonus`, `duplicate_conversion`, `collection_reward`, `store_purchase`, `store_refund`, `store_refund_reversed`, …',
                  ),
                reference: z.string().nullable().describe('What the row answers to: an Idempotency-Key, a purchase or grant id, an opening slot.'),
              }),
            ),
          })
          .describe('The ledger behind the balances: every change, newest first (the latest 50).'),
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
        spend_limits: z
          .array(SpendLimitAttributes)
          .describe(
            'The spend limits that hold the player (docs/design.md §7), each with their standing, as GET /api/v1/players/me/limits shows them; empty when none applies.',
          ),
        country: z.string().nullable().describe('The declared country (ISO 3166-1 alpha-2, upper case); null when not declared.'),
        birth_year: z.number().int().nullable().describe('The declared birth year; null when not declared.'),
        profile_assumptions: z
          .array(ProfileAssumption)
          .describe(
            'What the compliance rules in force (the content and its rule packs) assume of the player because the country or the birth year is not declared; empty when both are, or no rule reads them.',
          ),
        locked_at: Timestamp.nullable().describe(
          'When the studio locked the player (every request with their token answers 403 `player_locked`; no login or refresh); null while not locked.',
        ),
        sessions: z
          .object({
            total: Count,
            active: Count.describe('Sessions with a refresh token that still works.'),
            latest: z.array(
              z.object({
                id: UuidSchema.describe('The session (refresh-token family).'),
                created_at: Timestamp.describe('The login, registration or guest creation that began it.'),
                last_used_at: Timestamp.describe('Its last refresh (or its start).'),
                expires_at: Timestamp.describe('When its newest refresh token expires.'),
                active: z.boolean(),
                revoked_at: Timestamp.nullable().describe('When it was ended (logout, a reused token, the studio); null if never.'),
              }),
            ),
          })
          .describe("The player's sessions, the newest first (the latest 20)."),
        purchases: z
          .object({
            total: Count,
            latest: z.array(
              z.object({
                id: UuidSchema,
                kind: z.enum(['purchase', 'key', 'skip']).describe('Chests bought, a key that opened a chest, or a timer skipped.'),
                chest_type_id: UuidSchema.nullable().describe("A purchase's chest type (catalog id); null for a key or a skip."),
                quantity: z.number().int().nullable().describe("A purchase's number of chests; null for a key or a skip."),
                chest_id: UuidSchema.nullable().describe("A key's or a skip's chest; null for a purchase."),
                currency: z.string(),
                amount: DecimalSchema.describe('The price paid.'),
                status: z
                  .enum(['pending', 'debited', 'completed', 'compensating', 'refunded', 'failed'])
                  .describe(
                    '`completed`: paid and granted; `refunded`: its payment given back; `failed`: refused, nothing taken; the others: under way.',
                  ),
                created_at: Timestamp,
              }),
            ),
          })
          .describe(
            'What the player paid for with currencies of the app (purchases, keys, timer skips), the newest first (the latest 20); store purchases are at GET /api/v1/admin/players/{id}/store.',
          ),
        mailbox: z
          .object({
            total: Count,
            items: z.array(
              z.object({
                id: UuidSchema.describe('The chest id it keeps once claimed.'),
                chest_type_id: UuidSchema,
                name: z.string(),
                source: z.string(),
                received_at: Timestamp,
                expires_at: Timestamp,
              }),
            ),
          })
          .describe('Chests granted while the inventory was full, waiting to be claimed, the soonest to expire first (the first 20).'),
      }),
      links: ResourceLinks.describe('`self`: `/api/v1/admin/players/{id}`.'),
    }),
  }),
);

/** What `AdminPlayerDocument` describes, as the gateway renders it. */
export type AdminPlayerDocument = z.output<typeof AdminPlayerDocument>;

type PlayerAttributes = AdminPlayerDocument['data']['attributes'];

/** The player's chests, balances and collections. */
const holdings = ({ inventory, balances, collection }: Records): Pick<PlayerAttributes, 'inventory' | 'balances' | 'collections'> => ({
  inventory: {
    total_chests: inventory.totalChests,
    chests: inventory.chests.map((c) => ({ id: c.id, chest_type_id: c.chestTypeId, name: c.name, source: c.source, acquired_at: c.acquiredAt })),
  },
  balances: balances.balances.map((b) => ({ code: b.code, amount: b.amount })),
  collections: collection.collections.map((c) => ({
    id: c.collection.id,
    name: c.collection.name,
    unique_items: c.completeness.uniqueItems,
    total_items: c.completeness.totalItems,
    completed_at: c.completeness.completedAt ?? null,
  })),
});

/** The player's latest ledger rows and openings. */
const history = ({ ledger, openings }: Records): Pick<PlayerAttributes, 'ledger' | 'openings'> => ({
  ledger: {
    total: ledger.total,
    latest: ledger.entries.map((e) => ({
      at: e.at,
      currency: e.currency,
      delta: e.delta,
      balance_after: e.balanceAfter,
      reason: e.reason,
      reference: e.reference,
    })),
  },
  openings: {
    total: openings.total,
    latest: openings.openings.map((o) => ({
      id: o.openingId,
      chest_type_id: o.chestTypeId,
      opened_at: o.openedAt,
      rules_version: o.rulesVersion,
      items: o.items.map((it) => ({ collectible_id: it.collectibleId, rarity: it.rarity })),
    })),
  },
});

/** The declared profile, what the rules assume for what is missing, and the lock. */
const standing = (found: ReplyOf<typeof AdminFindPlayer>, { assumptions }: Records) =>
  ({
    country: found.country,
    birth_year: found.birthYear,
    profile_assumptions: assumptions.assumptions.map(({ underAge, ...a }) => ({ ...a, ...(underAge === undefined ? {} : { under_age: underAge }) })),
    locked_at: found.lockedAt,
  }) satisfies Pick<PlayerAttributes, 'country' | 'birth_year' | 'profile_assumptions' | 'locked_at'>;

/** The player's sessions, purchases (keys and skips too) and mailbox. */
const activity = ({ sessions, payments, mailbox }: Records): Pick<PlayerAttributes, 'sessions' | 'purchases' | 'mailbox'> => ({
  sessions: {
    total: sessions.total,
    active: sessions.active,
    latest: sessions.sessions.map((x) => ({
      id: x.id,
      created_at: x.createdAt,
      last_used_at: x.lastUsedAt,
      expires_at: x.expiresAt,
      active: x.active,
      revoked_at: x.revokedAt,
    })),
  },
  purchases: {
    total: payments.total,
    latest: payments.payments.map((p) => ({
      id: p.id,
      kind: p.kind,
      chest_type_id: p.chestTypeId,
      quantity: p.quantity,
      chest_id: p.chestId,
      currency: p.currency,
      amount: p.amount,
      status: p.status,
      created_at: p.createdAt,
    })),
  },
  mailbox: {
    total: mailbox.total,
    items: mailbox.items.map((m) => ({
      id: m.id,
      chest_type_id: m.chestTypeId,
      name: m.name,
      source: m.source,
      received_at: m.receivedAt,
      expires_at: m.expiresAt,
    })),
  },
});

/** One player as support sees them: identity, holdings, history, limits, standing and activity. */
export function adminPlayerDocument(found: ReplyOf<typeof AdminFindPlayer>, records: Records, base: string): z.output<typeof AdminPlayerDocument> {
  return {
    data: {
      type: 'player',
      id: found.playerId,
      attributes: {
        email: found.email,
        is_anonymous: found.isAnonymous,
        created_at: found.createdAt,
        ...holdings(records),
        ...history(records),
        spend_limits: records.limits.limits.map(spendLimitAttributes),
        ...standing(found, records),
        ...activity(records),
      },
      links: selfLinks.adminPlayer(base, found.playerId),
    },
  };
}

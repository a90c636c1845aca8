import { z } from 'zod';
import {
  DecimalSchema,
  SignedDecimalSchema,
  UuidSchema,
  type ReplyOf,
  AdminSimulate,
  AdminChestDrops,
  AdminListContentVersions,
  AdminContentDiff,
  AdminLoadContent,
  AdminPlayersStats,
  AdminChestsStats,
  AdminCollectionsStats,
  AdminWalletStats,
  AdminFindPlayer,
  type AuditEntry,
} from '@ccs/shared';
import { component } from '../openapi/components.js';
import type { Records } from '../routes/v1/studio-player-lookup.js';
import { drawnAgainstDisclosed } from './chest-odds.js';
import { Count, PageMeta, PaginationLinks, ResourceLinks, Timestamp } from './jsonapi.js';
import { SpendLimitAttributes, spendLimitAttributes } from './spend-limits.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/**
 * Response schemas of the admin API (the studio scope: the app's secret key), with the functions
 * that render them, typed by those schemas.
 */

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

/** The audit log. */
export const AuditLogDocument = component(
  'AuditLogDocument',
  "The app's admin audit log, newest first: every action of the admin API (every call but its reads), who made it, on what, when, how it ended and the note given with it.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('audit_entry'),
        id: z.string().describe('The request id of the call.'),
        attributes: z.object({
          at: Timestamp,
          actor: z.string().describe('The credential: `secret key …<last 4 characters>`.'),
          action: z.string().describe('The operation, e.g. `POST /api/v1/admin/players/{id}/lock`.'),
          target: z.string().nullable().describe('What it was about (a player id or email), when it names something.'),
          status: z.number().int(),
          note: z
            .string()
            .nullable()
            .describe("The note the action's body gave (`meta.note`; the console asks for one on every action); null when none."),
        }),
      }),
    ),
    meta: z.object({ total_count: Count, page: PageMeta }),
    links: PaginationLinks,
  }),
);

/** The app's content versions. */
export const ContentVersionsDocument = component(
  'ContentVersionsDocument',
  "The app's stored content versions, newest first; `meta.current_version` is the one the services apply.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('content_version'),
        id: z.string(),
        attributes: z.object({
          version: z.number().int(),
          loaded_at: Timestamp,
          current: z.boolean(),
          counts: z.object({ currencies: Count, rarities: Count, collections: Count, collectibles: Count, chests: Count }),
        }),
      }),
    ),
    meta: z.object({ current_version: z.number().int() }),
  }),
);

const Ids = z.array(z.string());

/** The differences between a version and the current content. */
export const ContentDiffDocument = component(
  'ContentDiffDocument',
  'What changed from `from_version` to the current content, per section; sections without a change are left out.',
  z.object({
    data: z.object({
      type: z.literal('content_diff'),
      id: z.string(),
      attributes: z.object({
        from_version: z.number().int(),
        to_version: z.number().int(),
        sections: z.array(
          z.object({
            section: z
              .enum([
                'currencies',
                'rarities',
                'collections',
                'collectibles',
                'chests',
                'players',
                'duplicates',
                'compliance',
                'banners',
                'store_products',
                'store',
                'trading',
              ])
              .describe(
                "`store_products`: the store's products by id; `store`: its settings `apple`, `google` and `refunds`; `players`, `duplicates`, `compliance` and `trading` are one item each, `(rules)`.",
              ),
            added: Ids,
            removed: Ids,
            changed: Ids,
            changed_fields: z
              .record(z.string(), z.array(z.string()))
              .describe(
                'For each changed id, the paths of what changed in it, dotted down to three levels (`price.coins`, `grants.currencies.gems`, `notifications.audience`); a list is one path.',
              ),
          }),
        ),
      }),
    }),
  }),
);

/** A content file loaded. */
export const ContentLoadedDocument = component(
  'ContentLoadedDocument',
  'The content version the file was loaded as.',
  z.object({
    data: z.object({
      type: z.literal('content_version'),
      id: z.string(),
      attributes: z.object({ version: z.number().int(), current: z.literal(true) }),
    }),
    meta: z.object({ message: z.string() }),
  }),
);

/** An odds simulation run. */
export const SimulationDocument = component(
  'SimulationDocument',
  'A simulation run of a chest: per rarity the disclosed long-run share against the observed one, the chi-square p-values, and pity.',
  z.object({
    data: z.object({
      type: z.literal('simulation'),
      id: UuidSchema.describe('The catalog chest.'),
      attributes: z.object({
        chest: z.object({ slug: z.string(), name: z.string(), rules_version: z.number().int() }),
        opens: Count,
        items: Count,
        seed: z.string().nullable(),
        rarities: z.array(
          z.object({
            rarity: z.string(),
            disclosed: z.number().describe('The long-run share the odds disclose (pity included).'),
            observed: z.number(),
            count: Count,
            deviation: z.number().describe('(count - expected) / its standard deviation: beyond ±3 is unusual.'),
          }),
        ),
        chi_square_p_value: z.object({ rarities: z.number(), collectibles: z.number() }),
        pity: z
          .object({ rarity: z.string(), hard: z.number().int(), hits: Count, guaranteed: Count, mean_gap: z.number(), expected_mean_gap: z.number() })
          .nullable(),
        complete_gachas: z
          .array(z.object({ collection: z.string(), collectibles: z.array(z.string()), chests: z.array(z.string()), advice: z.string() }))
          .describe(
            'The complete gachas this chest takes part in (docs/design.md §7): a collection whose completion is rewarded while these collectibles only come from paid chests (`chests`). Refused at load under `forbid_complete_gacha` or the JP rule pack; `advice` says what to change. Empty: none.',
          ),
      }),
    }),
  }),
);

/** A chest's real drops against its disclosed odds. */
export const ChestDropsDocument = component(
  'ChestDropsDocument',
  "What the app's real openings of a chest drew per rarity, against the disclosed long-run shares of its current rules.",
  z.object({
    data: z.object({
      type: z.literal('chest_drops'),
      id: UuidSchema,
      attributes: z.object({
        chest: z.object({ slug: z.string(), name: z.string(), rules_version: z.number().int() }),
        openings: Count.describe('Openings of the chest kept (OPENINGS_RETENTION_DAYS).'),
        items: Count.describe('Items they drew.'),
        since: Timestamp.nullable().describe('The oldest opening counted; null without any.'),
        ...drawnAgainstDisclosed('the current rules'),
      }),
      links: ResourceLinks.describe('`self`: `/api/v1/admin/chests/{id}/drops`.'),
    }),
  }),
);

/** What `AdminPlayerDocument` describes, as the gateway renders it. */
export type AdminPlayerDocument = z.output<typeof AdminPlayerDocument>;
/** What `AppOverviewDocument` describes, as the gateway renders it. */
export type AppOverviewDocument = z.output<typeof AppOverviewDocument>;
/** What `AuditLogDocument` describes, as the gateway renders it. */
export type AuditLogDocument = z.output<typeof AuditLogDocument>;
/** What `ChestDropsDocument` describes, as the gateway renders it. */
export type ChestDropsDocument = z.output<typeof ChestDropsDocument>;
/** What `ContentDiffDocument` describes, as the gateway renders it. */
export type ContentDiffDocument = z.output<typeof ContentDiffDocument>;
/** What `ContentLoadedDocument` describes, as the gateway renders it. */
export type ContentLoadedDocument = z.output<typeof ContentLoadedDocument>;
/** What `ContentVersionsDocument` describes, as the gateway renders it. */
export type ContentVersionsDocument = z.output<typeof ContentVersionsDocument>;
/** What `SimulationDocument` describes, as the gateway renders it. */
export type SimulationDocument = z.output<typeof SimulationDocument>;

/** A simulation's answer: what the simulated openings drew against the disclosed odds. */
export function simulationDocument(r: ReplyOf<typeof AdminSimulate>, seed: string | undefined): z.output<typeof SimulationDocument> {
  return {
    data: {
      type: 'simulation',
      id: r.chestTypeId,
      attributes: {
        chest: { slug: r.chest.slug, name: r.chest.name, rules_version: r.chest.rulesVersion },
        opens: r.opens,
        items: r.items,
        seed: seed ?? null,
        rarities: r.rarities.map((x) => ({
          rarity: x.rarity,
          disclosed: x.effective,
          observed: x.observed,
          count: x.count, // null only for an infinite deviation, as JSON rendered it before the move
          deviation: x.deviation as number,
        })),
        chi_square_p_value: r.chiSquarePValue,
        pity: r.pity && {
          rarity: r.pity.rarity,
          hard: r.pity.hard,
          hits: r.pity.hits,
          guaranteed: r.pity.guaranteed,
          mean_gap: r.pity.meanGap,
          expected_mean_gap: r.pity.expectedMeanGap,
        },
        complete_gachas: r.completeGachas ?? [],
      },
    },
  };
}

/** What real openings of a chest drew against its disclosed odds. */
export function chestDropsDocument(d: ReplyOf<typeof AdminChestDrops>, base: string): z.output<typeof ChestDropsDocument> {
  return {
    data: {
      type: 'chest_drops',
      id: d.chestTypeId,
      attributes: {
        chest: { slug: d.chest.slug, name: d.chest.name, rules_version: d.chest.rulesVersion },
        openings: d.openings,
        items: d.items,
        since: d.since,
        rarities: d.rarities.map((r) => ({ rarity: r.rarity, disclosed: r.disclosed, observed: r.observed, count: r.count })),
        chi_square_p_value: d.chiSquarePValue,
      },
      links: selfLinks.chestDrops(base, d.chestTypeId),
    },
  };
}

/** The app's stored content versions, newest first. */
export function contentVersionsDocument(r: ReplyOf<typeof AdminListContentVersions>): z.output<typeof ContentVersionsDocument> {
  return {
    data: r.versions.map((v) => ({
      type: 'content_version',
      id: String(v.version),
      attributes: { version: v.version, loaded_at: v.loadedAt, current: v.version === r.current, counts: v.counts },
    })),
    meta: { current_version: r.current },
  };
}

/** What the current content changed from a stored version, section by section. */
export function contentDiffDocument(d: ReplyOf<typeof AdminContentDiff>): z.output<typeof ContentDiffDocument> {
  return {
    data: {
      type: 'content_diff',
      id: `${d.fromVersion}..${d.toVersion}`,
      attributes: {
        from_version: d.fromVersion,
        to_version: d.toVersion,
        sections: d.sections.map((s) => ({
          section: s.section,
          added: s.added,
          removed: s.removed,
          changed: s.changed,
          changed_fields: s.changedFields,
        })),
      },
    },
  };
}

/** A content file loaded as the app's next version. */
export function contentLoadedDocument(r: ReplyOf<typeof AdminLoadContent>): z.output<typeof ContentLoadedDocument> {
  return {
    data: { type: 'content_version', id: String(r.version), attributes: { version: r.version, current: true } },
    meta: {
      message: `Content version ${r.version} loaded; each service applies it within moments (GET /api/v1/admin/overview shows their versions).`,
    },
  };
}

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

/** One entry of the app's audit log. */
export const auditEntry = (e: AuditEntry): AuditLogDocument['data'][number] => ({
  type: 'audit_entry',
  id: e.requestId,
  attributes: { at: e.at, actor: e.actor, action: e.action, target: e.target, status: e.status, note: e.note },
});

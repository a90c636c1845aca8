import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AdminFindPlayer,
  AdminListOpenings,
  AdminPlayerLedger,
  AdminPlayerPayments,
  AdminPlayerSessions,
  AdminProfileAssumptions,
  GetBalances,
  GetInventory,
  GetPlayerCollection,
  GetSpendLimits,
  ListMailbox,
  UuidSchema,
  type ReplyOf,
} from '@ccs/shared';
import { jsonApiQuery, sendDocument } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { studioCall } from './studio-call.js';
import { gatewayErrors } from '../../errors.js';
import { spendLimitAttributes } from '../../resources/spend-limits.js';
import { linkBase, selfLinks } from './resource-links.js';
import type { AdminPlayerDocument } from '../../resources/studio.js';

type PlayerAttributes = AdminPlayerDocument['data']['attributes'];

/** The player the path names, by id or by email (404 player_not_found for what cannot name one). */
async function findPlayer(request: FastifyRequest) {
  const who = ((request.params as Record<string, string>).id ?? '').trim();
  // No player id or email is empty, that long, or holds control characters (Postgres text cannot hold NUL).
  const controls = [...who].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  if (!who || who.length > 320 || controls) throw gatewayErrors.playerNotFound();
  const appId = request.tenant!.appId;
  const named = UuidSchema.safeParse(who).success ? { appId, playerId: who } : { appId, email: who };
  return request.server.bus.request(AdminFindPlayer, named, studioCall(request));
}

/** The latest this many of a player's sessions, purchases and mailbox items. */
const LATEST = 20;

/** What support needs of a player, asked of each service that holds it, in parallel. */
async function recordsOf(request: FastifyRequest, found: ReplyOf<typeof AdminFindPlayer>) {
  const { playerId, country, birthYear } = found;
  const appId = request.tenant!.appId;
  const bus = request.server.bus;
  const ctx = studioCall(request, playerId);
  const [inventory, balances, collection, openings, ledger, limits, sessions, payments, mailbox, assumptions] = await Promise.all([
    bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'desc' }, ctx),
    bus.request(GetBalances, { playerId }, ctx),
    bus.request(GetPlayerCollection, { page: { limit: 1, offset: 0 } }, ctx),
    bus.request(AdminListOpenings, { appId, playerId, page: { limit: 20, offset: 0 } }, ctx),
    bus.request(AdminPlayerLedger, { appId, playerId, limit: 50 }, ctx),
    bus.request(GetSpendLimits, {}, ctx),
    bus.request(AdminPlayerSessions, { appId, playerId, limit: LATEST }, ctx),
    bus.request(AdminPlayerPayments, { appId, playerId, limit: LATEST }, ctx),
    bus.request(ListMailbox, { page: { limit: LATEST, offset: 0 } }, ctx),
    bus.request(AdminProfileAssumptions, { appId, country, birthYear }, ctx),
  ]);
  return { inventory, balances, collection, openings, ledger, limits, sessions, payments, mailbox, assumptions };
}
type Records = Awaited<ReturnType<typeof recordsOf>>;

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

/** GET /api/v1/admin/players/{id}: one player by id or email, with what support needs. */
export async function player(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const found = await findPlayer(request);
  const records = await recordsOf(request, found);
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
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
      links: selfLinks.adminPlayer(linkBase(request), found.playerId),
    },
  } satisfies AdminPlayerDocument);
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AdminFindPlayer,
  AdminListOpenings,
  AdminPlayerLedger,
  GetBalances,
  GetInventory,
  GetPlayerCollection,
  GetSpendLimits,
  UuidSchema,
} from '@ccs/shared';
import { jsonApiQuery, sendDocument } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { studioCall, type Schemas } from './studio-call.js';
import { gatewayErrors } from '../../errors.js';
import { spendLimitAttributes } from './spend-limits.js';
import { linkBase, selfLinks } from './resource-links.js';

type PlayerAttributes = Schemas['AdminPlayerDocument']['data']['attributes'];

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

/** What support needs of a player, asked of each service that holds it, in parallel. */
async function recordsOf(request: FastifyRequest, playerId: string) {
  const appId = request.tenant!.appId;
  const bus = request.server.bus;
  const ctx = studioCall(request, playerId);
  const [inventory, balances, collection, openings, ledger, limits] = await Promise.all([
    bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'desc' }, ctx),
    bus.request(GetBalances, { playerId }, ctx),
    bus.request(GetPlayerCollection, { page: { limit: 1, offset: 0 } }, ctx),
    bus.request(AdminListOpenings, { appId, playerId, page: { limit: 20, offset: 0 } }, ctx),
    bus.request(AdminPlayerLedger, { appId, playerId, limit: 50 }, ctx),
    bus.request(GetSpendLimits, {}, ctx),
  ]);
  return { inventory, balances, collection, openings, ledger, limits };
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

/** GET /api/v1/admin/players/{id}: one player by id or email, with what support needs. */
export async function player(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const found = await findPlayer(request);
  const records = await recordsOf(request, found.playerId);
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
      },
      links: selfLinks.adminPlayer(linkBase(request), found.playerId),
    },
  } satisfies Schemas['AdminPlayerDocument']);
}

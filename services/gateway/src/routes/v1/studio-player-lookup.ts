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
import { linkBase } from './resource-links.js';
import { adminPlayerDocument } from '../../resources/studio-player-view.js';

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
/** What the services answered about a player: what the admin player document is rendered from. */
export type Records = Awaited<ReturnType<typeof recordsOf>>;

/** GET /api/v1/admin/players/{id}: one player by id or email, with what support needs. */
export async function player(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const found = await findPlayer(request);
  const records = await recordsOf(request, found);
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, adminPlayerDocument(found, records, linkBase(request)));
}

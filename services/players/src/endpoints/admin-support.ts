import {
  AdminLockPlayer,
  AdminPlayerSessions,
  AdminRevokeSessions,
  AdminSearchPlayers,
  appOf,
  callerOf,
  endpoint,
  GetPlayerLock,
  withTransaction,
} from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { announcePlayerLockChange } from '../profile/announce-change.js';
import { findPlayer, isPlayerLocked, searchPlayers, setPlayerLock } from '../repositories/players-repo.js';
import { listSessions, revokeAllFamilies } from '../repositories/refresh-tokens-repo.js';
import { playerErrors } from '../errors.js';

// The support desk's endpoints (docs/console.md, "Players"): finding players, their sessions,
// ending them, locking a player out. The gateway records the studio's actions in the audit log.

/** players.v1.admin_search_players: the app's players by email prefix (any case), or the newest first. */
export function adminSearchPlayersEndpoint(d: PlayersDeps) {
  return endpoint(AdminSearchPlayers, async (req) => {
    const r = await searchPlayers(d.pool, req.appId, req.emailPrefix, req.page);
    return {
      total: r.total,
      players: r.players.map((p) => ({
        playerId: p.id,
        email: p.email,
        isAnonymous: p.isAnonymous,
        createdAt: p.createdAt.toISOString(),
        lockedAt: p.lockedAt?.toISOString() ?? null,
      })),
    };
  });
}

/** players.v1.admin_player_sessions: the player's refresh-token families, the newest first. */
export function adminPlayerSessionsEndpoint(d: PlayersDeps) {
  return endpoint(AdminPlayerSessions, async (req) => {
    const r = await listSessions(d.pool, req.appId, req.playerId, req.limit);
    return {
      total: r.total,
      active: r.active,
      sessions: r.sessions.map((s) => ({
        id: s.familyId,
        createdAt: s.createdAt.toISOString(),
        lastUsedAt: s.lastUsedAt.toISOString(),
        expiresAt: s.expiresAt.toISOString(),
        active: s.active,
        revokedAt: s.revokedAt?.toISOString() ?? null,
      })),
    };
  });
}

/** players.v1.admin_revoke_sessions: every refresh-token family of the player revoked, in one statement. */
export function adminRevokeSessionsEndpoint(d: PlayersDeps) {
  return endpoint(AdminRevokeSessions, async (req) => {
    const revoked = await withTransaction(d.pool, async (tx) => {
      if (!(await findPlayer(tx, req.appId, req.playerId, true))) throw playerErrors.playerNotFound();
      return revokeAllFamilies(tx, req.appId, req.playerId);
    });
    d.log.info({ appId: req.appId, playerId: req.playerId, revoked }, "player's sessions revoked by the studio");
    return { playerId: req.playerId, revokedSessions: revoked };
  });
}

/**
 * players.v1.admin_lock_player: the lock (or unlock) is committed, then every gateway is told
 * (PlayerLockChanged, confirmed by the NATS server) before the answer, so the player's next
 * request through any gateway meets it.
 */
export function adminLockPlayerEndpoint(d: PlayersDeps) {
  return endpoint(AdminLockPlayer, async (req) => {
    const r = await withTransaction(d.pool, (tx) => setPlayerLock(tx, req.appId, req.playerId, req.locked));
    if (!r) throw playerErrors.playerNotFound();
    await announcePlayerLockChange(d, req.appId, req.playerId, req.locked);
    if (r.changed) d.log.info({ appId: req.appId, playerId: req.playerId, locked: req.locked }, 'player lock changed by the studio');
    return { playerId: req.playerId, lockedAt: r.lockedAt?.toISOString() ?? null, changed: r.changed };
  });
}

/** players.v1.player_lock: whether the calling player is locked (asked by a gateway that does not know yet). */
export function playerLockEndpoint(d: PlayersDeps) {
  return endpoint(GetPlayerLock, async (_req, ctx) => ({ locked: await isPlayerLocked(d.pool, appOf(ctx), callerOf(ctx)) }));
}

/** The support desk's endpoints, for the service's list. */
export const supportDeskEndpoints = (d: PlayersDeps) => [
  adminSearchPlayersEndpoint(d),
  adminPlayerSessionsEndpoint(d),
  adminRevokeSessionsEndpoint(d),
  adminLockPlayerEndpoint(d),
  playerLockEndpoint(d),
];

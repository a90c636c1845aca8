import { randomUUID } from 'node:crypto';
import { AppError, appOf, endpoint, RefreshSession, withTransaction, type Queryable, type Session } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { playerRulesOf } from '../repositories/apps-repo.js';
import { findPlayer } from '../repositories/players-repo.js';
import { lockRefreshToken, markRotated, revokeFamilies, revokeToken, type RefreshTokenRecord } from '../repositories/refresh-tokens-repo.js';
import { issueSession } from '../tokens/issue-session.js';
import { playerErrors } from '../errors.js';

/**
 * The successor of `token` when presenting `token` again is the retry of a refresh whose answer
 * was lost: rotated less than `graceSeconds` ago, and its successor never used nor revoked (so the
 * client cannot have received it, or never used it). Else undefined: that is reuse.
 */
async function lostSuccessor(tx: Queryable, appId: string, token: RefreshTokenRecord, graceSeconds: number) {
  if (!token.rotatedAt || !token.replacedBy || token.revokedAt) return undefined;
  if (Date.now() - token.rotatedAt.getTime() >= graceSeconds * 1000) return undefined;
  const next = await lockRefreshToken(tx, appId, token.replacedBy, 'id');
  return next && !next.rotatedAt && !next.revokedAt ? next : undefined;
}

/**
 * Refresh with rotation: each token works once and is replaced by a new one of the same family.
 * Presenting a used token again means it leaked (or a client raced itself): the whole family is
 * revoked, and that revocation is committed before the 401 goes out.
 *
 * One exception, so that a lost answer does not log a player out: a token presented again within
 * REFRESH_REUSE_GRACE_SECONDS of its rotation, while the token it was rotated into has not been
 * used, is the client's retry. It gets a new session of the same family, and the unused successor
 * is revoked, so the family still has one live token. Once the successor has been used, the old
 * token is reuse as before. A player the studio locked gets no token (403 `player_locked`).
 */
export function refreshEndpoint(d: PlayersDeps) {
  const graceSeconds = d.config.REFRESH_REUSE_GRACE_SECONDS;
  return endpoint(RefreshSession, async (req, ctx) => {
    const appId = appOf(ctx);
    const outcome = await withTransaction(d.pool, async (tx): Promise<{ session: Session } | { error: AppError }> => {
      const token = await lockRefreshToken(tx, appId, req.refreshToken);
      if (!token) return { error: playerErrors.invalidRefreshToken() };
      if (token.rotatedAt) {
        const lost = await lostSuccessor(tx, appId, token, graceSeconds);
        if (!lost) {
          await revokeFamilies(tx, appId, token.playerId, [token.familyId]);
          d.log.warn({ requestId: ctx.requestId, playerId: token.playerId }, 'refresh token reused; family revoked');
          return { error: playerErrors.refreshTokenReused() };
        }
        await revokeToken(tx, appId, lost.id);
        d.log.info({ requestId: ctx.requestId, playerId: token.playerId }, 'refresh retried within the grace window; unused successor replaced');
      }
      if (token.revokedAt) return { error: playerErrors.refreshTokenRevoked() };
      if (token.expiresAt.getTime() <= Date.now()) return { error: playerErrors.refreshTokenExpired() };
      const player = await findPlayer(tx, appId, token.playerId);
      if (!player) return { error: playerErrors.invalidRefreshToken() };
      // A locked player's session stays as it is (unlocked, it refreshes again); no token now.
      if (player.lockedAt) return { error: playerErrors.playerLocked() };
      const successorId = randomUUID();
      await markRotated(tx, appId, token.id, successorId);
      const rules = await playerRulesOf(tx, appId);
      return { session: await issueSession(tx, d.signer, player, rules, token.familyId, successorId) };
    });
    if ('error' in outcome) throw outcome.error;
    return outcome.session;
  });
}

import { AppError, endpoint, RefreshSession, requireApp, withTransaction, type Session } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { playerRulesOf } from '../repositories/apps-repository.js';
import { findPlayer } from '../repositories/players-repository.js';
import { lockRefreshToken, markRotated, revokeFamilies } from '../repositories/refresh-tokens-repository.js';
import { issueSession } from '../tokens/issue-session.js';

const refused = (code: string, detail: string) => AppError.unauthorized(code, detail);

/**
 * Refresh with rotation: each token works once and is replaced by a new one of the same family.
 * Presenting a used token again means it leaked (or a client raced itself): the whole family is
 * revoked, and that revocation is committed before the 401 goes out.
 */
export function refreshEndpoint(d: PlayersDeps) {
  return endpoint(RefreshSession, async (req, ctx) => {
    const appId = requireApp(ctx);
    const outcome = await withTransaction(d.pool, async (tx): Promise<{ session: Session } | { error: AppError }> => {
      const token = await lockRefreshToken(tx, appId, req.refreshToken);
      if (!token) return { error: refused('invalid_refresh_token', 'The refresh token is not valid.') };
      if (token.rotatedAt) {
        await revokeFamilies(tx, appId, token.playerId, [token.familyId]);
        d.log.warn({ requestId: ctx.requestId, playerId: token.playerId }, 'refresh token reused; family revoked');
        return { error: refused('refresh_token_reused', 'This refresh token was already used; the session is revoked. Log in again.') };
      }
      if (token.revokedAt) return { error: refused('refresh_token_revoked', 'The session has ended. Log in again.') };
      if (token.expiresAt.getTime() <= Date.now()) return { error: refused('refresh_token_expired', 'The refresh token has expired. Log in again.') };
      const player = await findPlayer(tx, appId, token.playerId);
      if (!player) return { error: refused('invalid_refresh_token', 'The refresh token is not valid.') };
      await markRotated(tx, appId, token.id);
      const rules = await playerRulesOf(tx, appId);
      return { session: await issueSession(tx, d.signer, player, rules, token.familyId) };
    });
    if ('error' in outcome) throw outcome.error;
    return outcome.session;
  });
}

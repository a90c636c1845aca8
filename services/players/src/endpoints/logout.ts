import { appOf, callerOf, endpoint, LogoutPlayer } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { familyOfToken, revokeFamilies } from '../repositories/refresh-tokens-repo.js';

/**
 * Logout: revokes the session of the access token (its `sid`) and, when given, the family of a
 * refresh token of the same player. Access tokens already issued expire on their own (short TTL).
 */
export function logoutEndpoint(d: PlayersDeps) {
  return endpoint(LogoutPlayer, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const families = req.sessionId ? [req.sessionId] : [];
    if (req.refreshToken) {
      const family = await familyOfToken(d.pool, appId, playerId, req.refreshToken);
      if (family) families.push(family);
    }
    const revokedFamilies = families.length ? await revokeFamilies(d.pool, appId, playerId, families) : 0;
    return { revokedFamilies };
  });
}

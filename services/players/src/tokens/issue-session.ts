import { randomUUID } from 'node:crypto';
import type { Queryable, Session } from '@ccs/shared';
import type { PlayerRules } from '../repositories/apps-repo.js';
import { toView, type PlayerRecord } from '../repositories/players-repo.js';
import { insertRefreshToken } from '../repositories/refresh-tokens-repo.js';
import type { AccessTokenSigner } from './access-tokens.js';

/**
 * Issues an access token and a refresh token for a player, inside the caller's transaction. A new
 * login starts a new refresh token family; a refresh continues its family.
 */
export async function issueSession(
  tx: Queryable,
  signer: AccessTokenSigner,
  player: PlayerRecord,
  rules: PlayerRules,
  familyId: string = randomUUID(),
  refreshTokenId?: string,
): Promise<Session> {
  const refreshToken = await insertRefreshToken(tx, {
    id: refreshTokenId,
    appId: player.appId,
    playerId: player.id,
    familyId,
    ttlSeconds: rules.refresh_token_ttl_seconds,
  });
  const accessToken = signer.issue(
    { playerId: player.id, appId: player.appId, anonymous: player.isAnonymous, sessionId: familyId },
    rules.access_token_ttl_seconds,
  );
  return {
    player: toView(player),
    accessToken,
    refreshToken,
    tokenType: 'Bearer',
    expiresIn: rules.access_token_ttl_seconds,
    playerType: player.isAnonymous ? 'anonymous' : 'registered',
  };
}

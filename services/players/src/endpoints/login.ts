import { appOf, endpoint, LoginPlayer, withTransaction } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { playerRulesOf } from '../repositories/apps-repo.js';
import { findPlayerByEmail } from '../repositories/players-repo.js';
import { issueSession } from '../tokens/issue-session.js';
import { playerErrors } from '../errors.js';

// One answer for an unknown email and a wrong password, so accounts cannot be enumerated.

/**
 * Login with email and password; a new session (refresh token family) per login. The lookup and
 * the verification take one of the bounded password slots (503 `overloaded` past the bound). A
 * player the studio locked gets no session (403 `player_locked`).
 */
export function loginEndpoint(d: PlayersDeps) {
  return endpoint(LoginPlayer, async (req, ctx) => {
    const appId = appOf(ctx);
    const player = await d.hasher.withSlot(async (pw) => {
      const found = await findPlayerByEmail(d.pool, appId, req.email);
      if (!found?.passwordHash) {
        await pw.verifyAgainstNothing(req.password);
        throw playerErrors.invalidCredentials();
      }
      if (!(await pw.verify(found.passwordHash, req.password))) throw playerErrors.invalidCredentials();
      return found;
    });
    // Told only to whoever knows the password: a locked player learns why they cannot sign in.
    if (player.lockedAt) throw playerErrors.playerLocked();
    const rules = await playerRulesOf(d.pool, appId);
    return withTransaction(d.pool, (tx) => issueSession(tx, d.signer, player, rules));
  });
}

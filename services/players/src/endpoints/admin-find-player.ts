import { AdminFindPlayer, endpoint } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { findPlayer, findPlayerByEmail } from '../repositories/players-repo.js';
import { playerErrors } from '../errors.js';

/** One player of an app by id or email, with their declared profile and lock (the admin API's and the CLI's player lookups). */
export function adminFindPlayerEndpoint(d: PlayersDeps) {
  return endpoint(AdminFindPlayer, async (req) => {
    const player = req.playerId ? await findPlayer(d.pool, req.appId, req.playerId) : await findPlayerByEmail(d.pool, req.appId, req.email!);
    if (!player) throw playerErrors.appHasNoSuchPlayer();
    return {
      playerId: player.id,
      email: player.email,
      isAnonymous: player.isAnonymous,
      createdAt: player.createdAt.toISOString(),
      country: player.country,
      birthYear: player.birthYear,
      lockedAt: player.lockedAt?.toISOString() ?? null,
    };
  });
}

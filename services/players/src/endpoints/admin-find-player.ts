import { AdminFindPlayer, endpoint } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { findPlayer, findPlayerByEmail } from '../repositories/players-repository.js';
import { playerErrors } from '../errors.js';

/** Operator command: one player of an app by id or email (the admin CLI's player lookups). */
export function adminFindPlayerEndpoint(d: PlayersDeps) {
  return endpoint(AdminFindPlayer, async (req) => {
    const player = req.playerId ? await findPlayer(d.pool, req.appId, req.playerId) : await findPlayerByEmail(d.pool, req.appId, req.email!);
    if (!player) throw playerErrors.appHasNoSuchPlayer();
    return { playerId: player.id, email: player.email, isAnonymous: player.isAnonymous, createdAt: player.createdAt.toISOString() };
  });
}

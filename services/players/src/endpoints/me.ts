import { AppError, endpoint, GetMe, requireApp, UpdateMe } from '@ccs/shared';
import { requirePlayer } from '../call-context.js';
import type { PlayersDeps } from '../deps.js';
import { findPlayer, toView, updatePrivacy } from '../repositories/players-repository.js';

const notFound = () => AppError.notFound('player_not_found', 'The player of this token does not exist in this app.');

/** The calling player. */
export function getMeEndpoint(d: PlayersDeps) {
  return endpoint(GetMe, async (_req, ctx) => {
    const player = await findPlayer(d.pool, requireApp(ctx), requirePlayer(ctx));
    if (!player) throw notFound();
    return toView(player);
  });
}

/** Changes the calling player's privacy (who may see their inventory). */
export function updateMeEndpoint(d: PlayersDeps) {
  return endpoint(UpdateMe, async (req, ctx) => {
    const player = await updatePrivacy(d.pool, requireApp(ctx), requirePlayer(ctx), req.privacy);
    if (!player) throw notFound();
    return toView(player);
  });
}

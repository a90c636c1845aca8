import { AppError, appOf, callerOf, endpoint, GetMe, UpdateMe } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { birthYearLocked, checkComplianceAttributes } from '../profile/compliance-attributes.js';
import { findPlayer, toView, updateSettings } from '../repositories/players-repository.js';

const notFound = () => AppError.notFound('player_not_found', 'The player of this token does not exist in this app.');

/** The calling player. */
export function getMeEndpoint(d: PlayersDeps) {
  return endpoint(GetMe, async (_req, ctx) => {
    const player = await findPlayer(d.pool, appOf(ctx), callerOf(ctx));
    if (!player) throw notFound();
    return toView(player);
  });
}

/**
 * Changes the calling player's settings: privacy (who may see their inventory), country and
 * birth year (the compliance gates). 422 per invalid attribute; 409 `birth_year_locked` for a
 * birth year other than the one already set (the same one again is fine).
 */
export function updateMeEndpoint(d: PlayersDeps) {
  return endpoint(UpdateMe, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const { attributes, errors } = checkComplianceAttributes(req);
    if (errors.length) throw AppError.many(errors);
    const player = await updateSettings(d.pool, appId, playerId, { privacy: req.privacy, ...attributes });
    if (player) return toView(player);
    // Nothing updated: either no such player, or its birth year is set to another one.
    if (await findPlayer(d.pool, appId, playerId)) throw birthYearLocked();
    throw notFound();
  });
}

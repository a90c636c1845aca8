import { AppError, appOf, callerOf, endpoint, GetMe, UpdateMe, withTransaction } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { checkComplianceAttributes } from '../profile/compliance-attributes.js';
import { applyOwnChange } from '../profile/declared-profile.js';
import { announceComplianceProfileChange } from '../profile/announce-change.js';
import { findPlayer, toView, updateSettings } from '../repositories/players-repo.js';
import { playerErrors } from '../errors.js';

/** The calling player. */
export function getMeEndpoint(d: PlayersDeps) {
  return endpoint(GetMe, async (_req, ctx) => {
    const player = await findPlayer(d.pool, appOf(ctx), callerOf(ctx));
    if (!player) throw playerErrors.tokenPlayerNotFound();
    return toView(player);
  });
}

/**
 * Changes the calling player's settings: privacy (who may see their inventory), country and
 * birth year (the compliance gates). 422 per invalid attribute; a declared profile follows the
 * rules of profile/declared-profile.ts (403 `country_locked`, `country_change_too_soon` with
 * `meta.retry_after`, `birth_year_locked`), checked under the player's row lock: nothing changes
 * when one refuses. A declared country or birth year is announced to the gateways before the answer
 * (their catalog flags, profile/announce-change.ts).
 */
export function updateMeEndpoint(d: PlayersDeps) {
  return endpoint(UpdateMe, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const { attributes, errors } = checkComplianceAttributes(req);
    if (errors.length) throw AppError.many(errors);
    const player = await withTransaction(d.pool, async (tx) => {
      if (!(await applyOwnChange(d, tx, appId, playerId, attributes))) return undefined;
      return updateSettings(tx, appId, playerId, { privacy: req.privacy });
    });
    if (!player) throw playerErrors.tokenPlayerNotFound();
    if (attributes.country !== undefined || attributes.birthYear !== undefined) await announceComplianceProfileChange(d, appId, playerId);
    return toView(player);
  });
}

import { appOf, callerOf, endpoint, GetComplianceProfile } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { findPlayer } from '../repositories/players-repo.js';
import { playerErrors } from '../errors.js';

/**
 * players.v1.compliance_profile: the calling player's country and birth year, for the chests
 * service's purchase gates (internal; only chests may ask). Players owns them, so the gates read
 * them here at each gated purchase instead of keeping a copy that could go stale.
 */
export function complianceProfileEndpoint(d: PlayersDeps) {
  return endpoint(GetComplianceProfile, async (_req, ctx) => {
    const player = await findPlayer(d.pool, appOf(ctx), callerOf(ctx));
    if (!player) throw playerErrors.tokenPlayerNotFound();
    return { country: player.country, birthYear: player.birthYear };
  });
}

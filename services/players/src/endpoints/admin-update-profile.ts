import { AdminUpdatePlayerProfile, AppError, endpoint, withTransaction } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { checkComplianceAttributes } from '../profile/compliance-attributes.js';
import { lockDeclaredProfile, writeDeclaredProfile } from '../repositories/declared-profile-repo.js';
import { playerErrors } from '../errors.js';
import { announceComplianceProfileChange } from '../profile/announce-change.js';

/**
 * players.v1.admin_update_profile: the studio sets (or, with null, clears) a player's declared
 * country and birth year (`PATCH /api/v1/admin/players/{id}`, secret key; the gateway records it
 * in the audit log). The player's rules (country lock, cooldown, birth year only later) do not
 * apply: this is how support corrects what a player cannot. It does not start the player's
 * country-change cooldown. 422 for an invalid value, 404 for no such player of the app. The change
 * is announced to the gateways before the answer (their catalog flags, profile/announce-change.ts).
 */
export function adminUpdateProfileEndpoint(d: PlayersDeps) {
  return endpoint(AdminUpdatePlayerProfile, async (req) => {
    const { attributes, errors } = checkComplianceAttributes({
      ...(typeof req.country === 'string' ? { country: req.country } : {}),
      ...(typeof req.birthYear === 'number' ? { birthYear: req.birthYear } : {}),
    });
    if (errors.length) throw AppError.many(errors);
    const change = {
      ...(req.country !== undefined ? { country: req.country === null ? null : attributes.country! } : {}),
      ...(req.birthYear !== undefined ? { birthYear: req.birthYear === null ? null : attributes.birthYear! } : {}),
    };
    const profile = await withTransaction(d.pool, async (tx) => {
      if (!(await lockDeclaredProfile(tx, req.appId, req.playerId))) throw playerErrors.playerNotFound();
      await writeDeclaredProfile(tx, req.appId, req.playerId, change, false);
      const now = (await lockDeclaredProfile(tx, req.appId, req.playerId))!;
      return {
        playerId: req.playerId,
        country: now.country,
        birthYear: now.birthYear,
        countryChangedAt: now.countryChangedAt ? now.countryChangedAt.toISOString() : null,
      };
    });
    if (req.country !== undefined || req.birthYear !== undefined) await announceComplianceProfileChange(d, req.appId, req.playerId);
    return profile;
  });
}

import type { Queryable } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { profileErrors } from '../errors.js';
import { blockedRegionsOf, lockDeclaredProfile, writeDeclaredProfile, type DeclaredProfile } from '../repositories/declared-profile-repo.js';
import type { ComplianceAttributes } from '../repositories/players-repo.js';

export type { DeclaredProfile };

/**
 * A declared profile cannot be gamed (docs/content.md, "Compliance"): what a player may change of
 * the country and birth year the compliance gates read.
 * - Country: the first declaration (from none) is free. A player whose declared country is one of
 *   the app's blocked regions cannot change it (403 `country_locked`). Any other declared country
 *   changes at most once per COUNTRY_CHANGE_COOLDOWN_DAYS (403 `country_change_too_soon`, with
 *   `meta.retry_after`: the ISO 8601 UTC moment from which it may change again).
 * - Birth year: the first declaration is free; then it may move later (a younger player), never
 *   earlier (403 `birth_year_locked`): an earlier year would make an age-refused player older.
 * The studio changes either through `PATCH /api/v1/admin/players/{id}` (no rule applies there).
 * Giving the value already declared changes nothing and is never refused.
 */

/** What a player's own change does: the attributes to write, and whether the country changed (the cooldown starts). */
export interface AllowedChange {
  attributes: ComplianceAttributes;
  countryChanged: boolean;
}

/**
 * Checks a player's own change of their declared profile against the rules; throws the first
 * refusal (the country's, then the birth year's), else returns what to write.
 */
export function checkOwnChange(
  current: DeclaredProfile,
  wanted: ComplianceAttributes,
  rules: { blockedRegions: readonly string[]; cooldownDays: number },
  now: Date = new Date(),
): AllowedChange {
  const attributes: ComplianceAttributes = {};
  let countryChanged = false;
  if (wanted.country !== undefined && wanted.country !== current.country) {
    if (current.country !== null) {
      if (rules.blockedRegions.includes(current.country)) throw profileErrors.countryLocked();
      if (current.countryChangedAt) {
        const retryAfter = new Date(current.countryChangedAt.getTime() + rules.cooldownDays * 86_400_000);
        if (retryAfter > now) throw profileErrors.countryChangeTooSoon(retryAfter);
      }
      countryChanged = true;
    }
    attributes.country = wanted.country;
  }
  if (wanted.birthYear !== undefined && wanted.birthYear !== current.birthYear) {
    if (current.birthYear !== null && wanted.birthYear < current.birthYear) throw profileErrors.birthYearLocked();
    attributes.birthYear = wanted.birthYear;
  }
  return { attributes, countryChanged };
}

/**
 * A player's own change of their declared profile, in the caller's transaction: the row locked,
 * the rules checked against the app's blocked regions and COUNTRY_CHANGE_COOLDOWN_DAYS, the
 * change written. Throws the refusal (nothing written); false when there is no such player.
 */
export async function applyOwnChange(
  d: Pick<PlayersDeps, 'config'>,
  tx: Queryable,
  appId: string,
  playerId: string,
  wanted: ComplianceAttributes,
): Promise<boolean> {
  if (wanted.country === undefined && wanted.birthYear === undefined) return true;
  const current = await lockDeclaredProfile(tx, appId, playerId);
  if (!current) return false;
  // The regions matter only when a declared country would change.
  const changing = wanted.country !== undefined && current.country !== null && wanted.country !== current.country;
  const blockedRegions = changing ? await blockedRegionsOf(tx, appId) : [];
  const change = checkOwnChange(current, wanted, { blockedRegions, cooldownDays: d.config.COUNTRY_CHANGE_COOLDOWN_DAYS });
  await writeDeclaredProfile(tx, appId, playerId, change.attributes, change.countryChanged);
  return true;
}

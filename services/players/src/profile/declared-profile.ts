import { AppError, type Queryable } from '@ccs/shared';
import { z } from 'zod';
import type { PlayersDeps } from '../deps.js';
import type { ComplianceAttributes } from '../repositories/players-repository.js';

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

/** A player's declared profile as the rules read it, under the row's lock. */
export interface DeclaredProfile {
  country: string | null;
  birthYear: number | null;
  countryChangedAt: Date | null;
}

export const profileErrors = {
  countryLocked: () =>
    new AppError({
      status: 403,
      code: 'country_locked',
      title: 'Forbidden',
      detail: 'Your declared country is one where paid random items are not offered, so it cannot be changed here: contact support if it is wrong.',
      source: { pointer: '/data/attributes/country' },
    }),
  countryChangeTooSoon: (retryAfter: Date) =>
    new AppError({
      status: 403,
      code: 'country_change_too_soon',
      title: 'Forbidden',
      detail: `Your declared country was changed recently; it may change again from ${retryAfter.toISOString()}.`,
      source: { pointer: '/data/attributes/country' },
      meta: { retry_after: retryAfter.toISOString() },
    }),
  birthYearLocked: () =>
    new AppError({
      status: 403,
      code: 'birth_year_locked',
      title: 'Forbidden',
      detail: 'A declared birth year may only move later, never earlier: contact support if it is wrong.',
      source: { pointer: '/data/attributes/birth_year' },
    }),
};

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

/** The player's declared profile, its row locked for the transaction (undefined: no such player in the app). */
export async function lockDeclaredProfile(tx: Queryable, appId: string, playerId: string): Promise<DeclaredProfile | undefined> {
  const r = await tx.query<{ country: string | null; birth_year: number | null; country_changed_at: Date | null }>(
    'SELECT country, birth_year, country_changed_at FROM players WHERE app_id = $1 AND id = $2 FOR UPDATE',
    [appId, playerId],
  );
  const row = r.rows[0];
  return row && { country: row.country, birthYear: row.birth_year, countryChangedAt: row.country_changed_at };
}

const Regions = z.array(z.string().regex(/^[A-Z]{2}$/));

/**
 * The blocked regions of the app's current content (its compliance rules), from the content
 * versions this service keeps; none when no content with compliance rules is stored.
 */
export async function blockedRegionsOf(db: Queryable, appId: string): Promise<string[]> {
  const r = await db.query<{ regions: unknown }>(
    `SELECT c.content -> 'compliance' -> 'blocked_regions' AS regions FROM app_contents c JOIN apps a ON a.id = c.app_id
      WHERE c.app_id = $1 AND c.version <= a.content_version ORDER BY c.version DESC LIMIT 1`,
    [appId],
  );
  const parsed = Regions.safeParse(r.rows[0]?.regions);
  return parsed.success ? parsed.data : [];
}

/** Writes a declared profile change (absent members stay; `null` clears, for the studio); the cooldown starts when `countryChanged`. */
export async function writeDeclaredProfile(
  tx: Queryable,
  appId: string,
  playerId: string,
  change: { country?: string | null; birthYear?: number | null },
  countryChanged: boolean,
): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [appId, playerId];
  if (change.country !== undefined) {
    params.push(change.country);
    sets.push(`country = $${params.length}`);
  }
  if (change.birthYear !== undefined) {
    params.push(change.birthYear);
    sets.push(`birth_year = $${params.length}`);
  }
  if (countryChanged) sets.push('country_changed_at = now()');
  if (!sets.length) return;
  await tx.query(`UPDATE players SET ${sets.join(', ')} WHERE app_id = $1 AND id = $2`, params);
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

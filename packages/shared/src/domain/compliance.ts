import type { ComplianceRules } from '../contracts/content.js';

/** What the compliance gates know of a player: both self-declared, either may be unknown (null). */
export interface PlayerComplianceProfile {
  country: string | null;
  birthYear: number | null;
}

/** Why a purchase with a paid currency is refused: the error code, and the reason behind it. */
export interface ComplianceRefusal {
  code: 'blocked_in_region' | 'age_restricted';
  reason: 'country_unknown' | 'country_blocked' | 'birth_year_unknown' | 'under_min_age';
}

/** Whether buying with `currency` is gated at all: it is a paid currency and some gate is set. */
export function isGatedCurrency(rules: ComplianceRules | undefined, currency: string): boolean {
  if (!rules || !rules.paid_currencies.includes(currency)) return false;
  return rules.blocked_regions.length > 0 || (rules.min_age ?? 0) > 0;
}

/**
 * The age a player born in `birthYear` has surely reached at any moment of `now`'s year (UTC):
 * a birth year alone cannot tell whether this year's birthday has passed, so it is assumed not
 * to have. Someone born in 2007 counts as 17 throughout 2025, and as 18 from 1 January 2026.
 */
export function guaranteedAge(birthYear: number, now: Date = new Date()): number {
  return Math.max(0, now.getUTCFullYear() - birthYear - 1);
}

/**
 * Why `profile` may not buy with `currency` under `rules`, or undefined when it may. Only paid
 * currencies are gated. The region gate is checked first, then the age gate; an unknown country
 * (when regions are blocked) or birth year (when a minimum age is set) is refused, because the
 * player has not shown that the purchase is allowed (docs/content.md, "Compliance").
 */
export function purchaseRefusal(
  rules: ComplianceRules | undefined,
  currency: string,
  profile: PlayerComplianceProfile,
  now: Date = new Date(),
): ComplianceRefusal | undefined {
  if (!rules || !isGatedCurrency(rules, currency)) return undefined;
  if (rules.blocked_regions.length > 0) {
    if (profile.country === null) return { code: 'blocked_in_region', reason: 'country_unknown' };
    if (rules.blocked_regions.includes(profile.country)) return { code: 'blocked_in_region', reason: 'country_blocked' };
  }
  const minAge = rules.min_age ?? 0;
  if (minAge > 0) {
    if (profile.birthYear === null) return { code: 'age_restricted', reason: 'birth_year_unknown' };
    if (guaranteedAge(profile.birthYear, now) < minAge) return { code: 'age_restricted', reason: 'under_min_age' };
  }
  return undefined;
}

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

/** Whether buying with `currency` is gated at all: it is a paid currency and some gate (region, age, spend limit) is set. */
export function isGatedCurrency(rules: ComplianceRules | undefined, currency: string): boolean {
  if (!rules || !rules.paid_currencies.includes(currency)) return false;
  return rules.blocked_regions.length > 0 || (rules.min_age ?? 0) > 0 || (rules.spend_limits?.length ?? 0) > 0;
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

/** A spend limit's period: the UTC calendar day or month. */
export type SpendPeriod = 'day' | 'month';

/** One limit a player is held to: at most `limit` units of paid currency per `period`. */
export interface ApplicableSpendLimit {
  period: SpendPeriod;
  limit: number;
}

/**
 * The spend limits (DESIGN.md §7) `profile` is held to under `rules`: for each period, the
 * strictest of the limits whose `max_age` and `countries` cover the player, at most one per
 * period (day first). What is not known counts against the player, as the region and age gates
 * do: an unknown birth year is held to every age's limits (a player who has not shown they are
 * older than `max_age` is treated as a minor), an unknown country to the limits of every country.
 */
export function applicableSpendLimits(
  rules: ComplianceRules | undefined,
  profile: PlayerComplianceProfile,
  now: Date = new Date(),
): ApplicableSpendLimit[] {
  const strictest: Partial<Record<SpendPeriod, number>> = {};
  for (const l of rules?.spend_limits ?? []) {
    if (profile.birthYear !== null && guaranteedAge(profile.birthYear, now) > l.max_age) continue;
    if (l.countries && profile.country !== null && !l.countries.includes(profile.country)) continue;
    for (const [period, limit] of [
      ['day', l.per_day],
      ['month', l.per_month],
    ] as const)
      if (limit !== undefined) strictest[period] = Math.min(strictest[period] ?? limit, limit);
  }
  return (['day', 'month'] as const).flatMap((period) => (strictest[period] === undefined ? [] : [{ period, limit: strictest[period] }]));
}

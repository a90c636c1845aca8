import type { ComplianceRules } from '../contracts/content.js';
import { complianceInForce, type RuleRef, type SpendLimitInForce } from './rule-packs.js';

/** What the compliance gates know of a player: both self-declared, either may be unknown (null). */
export interface PlayerComplianceProfile {
  country: string | null;
  birthYear: number | null;
}

/** Why a purchase with a paid currency is refused: the error code, and the reason behind it. */
export interface ComplianceRefusal {
  code: 'blocked_in_region' | 'age_restricted';
  reason: 'country_unknown' | 'country_blocked' | 'birth_year_unknown' | 'under_min_age';
  /** The rule pack's rule behind the refusal, when a pack set the gate (`meta.rule`). */
  rule?: RuleRef;
  /** The minimum age that refused (an age gate's). */
  minAge?: number;
}

/**
 * Whether buying with `currency` is gated at all: it is a paid currency and some gate (region,
 * age, spend limit in units of paid currency; the content's own or its rule packs') is set. Spend
 * limits in money concern store purchases only.
 */
export function isGatedCurrency(rules: ComplianceRules | undefined, currency: string): boolean {
  if (!rules || !rules.paid_currencies.includes(currency)) return false;
  const r = complianceInForce(rules);
  return r.blocked_regions.length > 0 || (r.min_age ?? 0) > 0 || r.spend_limits.some(isUnitLimit) || r.regional_age_gates.length > 0;
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
  const r = complianceInForce(rules);
  if (r.blocked_regions.length > 0) {
    if (profile.country === null) return { code: 'blocked_in_region', reason: 'country_unknown' };
    if (r.blocked_regions.includes(profile.country)) {
      const rule = r.from.blocked_regions[profile.country];
      return { code: 'blocked_in_region', reason: 'country_blocked', ...(rule ? { rule } : {}) };
    }
  }
  const minAge = r.min_age ?? 0;
  if (minAge > 0) {
    if (profile.birthYear === null) return { code: 'age_restricted', reason: 'birth_year_unknown', minAge };
    if (guaranteedAge(profile.birthYear, now) < minAge) return { code: 'age_restricted', reason: 'under_min_age', minAge };
  }
  // A pack's age gate of a country (BR under 18): an unknown country may be that one.
  for (const gate of r.regional_age_gates) {
    if (profile.country !== null && !gate.countries.includes(profile.country)) continue;
    const at = { code: 'age_restricted', minAge: gate.min_age, rule: gate.rule } as const;
    if (profile.birthYear === null) return { ...at, reason: 'birth_year_unknown' };
    if (guaranteedAge(profile.birthYear, now) < gate.min_age) return { ...at, reason: 'under_min_age' };
  }
  return undefined;
}

/** A spend limit's period: the UTC calendar day or month, or one payment (a rule pack's cap per payment). */
export type SpendPeriod = 'day' | 'month' | 'payment';

/** One limit a player is held to: at most `limit` per `period`, in units of paid currency or in `money`; `rule` when a rule pack set it. */
export interface ApplicableSpendLimit {
  period: SpendPeriod;
  limit: number;
  /** The ISO 4217 money a limit on store spend counts in; absent for a limit in units of paid currency. */
  money?: string;
  rule?: RuleRef;
}

/** Whether a spend limit counts units of paid currency spent on paid random items (not store money). */
const isUnitLimit = (l: SpendLimitInForce): boolean => l.money === undefined;

const PERIODS = ['day', 'month', 'payment'] as const;

/**
 * The spend limits in units of paid currency (no `money`) that `profile` is held to under `rules`:
 * what the chests' payments are checked against (`heldLimits`).
 */
export function applicableSpendLimits(
  rules: ComplianceRules | undefined,
  profile: PlayerComplianceProfile,
  now: Date = new Date(),
): ApplicableSpendLimit[] {
  return heldLimits((rules ? complianceInForce(rules).spend_limits : []).filter(isUnitLimit), profile, now);
}

/**
 * The spend limits in money that `profile` is held to under `rules`, per money (ordered by its
 * code) the strictest per period: what the store's verified transactions are checked against.
 * Which limits hold the player is decided exactly as for the limits in units (`heldLimits`).
 */
export function applicableMoneyLimits(
  rules: ComplianceRules | undefined,
  profile: PlayerComplianceProfile,
  now: Date = new Date(),
): ApplicableSpendLimit[] {
  const byMoney = new Map<string, SpendLimitInForce[]>();
  for (const l of rules ? complianceInForce(rules).spend_limits : [])
    if (l.money !== undefined) byMoney.set(l.money, [...(byMoney.get(l.money) ?? []), l]);
  return [...byMoney.keys()].sort().flatMap((money) => heldLimits(byMoney.get(money)!, profile, now).map((l) => ({ ...l, money })));
}

/**
 * Of `limits` (all in one unit: paid currency, or one money), those `profile` is held to: for
 * each period, the strictest of the limits whose `max_age` and `countries` cover the player, at
 * most one per period (day first). What is not known counts against the player, as the region and
 * age gates do: an unknown birth year is held to every age's limits (a player who has not shown
 * they are older than `max_age` is treated as a minor), an unknown country to the limits of every
 * country.
 */
function heldLimits(limits: SpendLimitInForce[], profile: PlayerComplianceProfile, now: Date): ApplicableSpendLimit[] {
  const strictest: Partial<Record<SpendPeriod, ApplicableSpendLimit>> = {};
  for (const l of limits) {
    if (profile.birthYear !== null && guaranteedAge(profile.birthYear, now) > l.max_age) continue;
    if (l.countries && profile.country !== null && !l.countries.includes(profile.country)) continue;
    for (const [period, limit] of [
      ['day', l.per_day],
      ['month', l.per_month],
      ['payment', l.per_payment],
    ] as const)
      if (limit !== undefined && limit < (strictest[period]?.limit ?? Infinity))
        strictest[period] = { period, limit, ...(l.rule ? { rule: l.rule } : {}) };
  }
  return PERIODS.flatMap((period) => (strictest[period] ? [strictest[period]] : []));
}

/**
 * What the compliance rules in force assume of a player because they have not declared something
 * (docs/content.md, "A player who has not declared a birth year or a country"), for the studio's
 * support: each gate that refuses paid currencies only for want of a country or birth year, and
 * each spend limit (the strictest per period and money, as the gates hold the player to them)
 * that holds the player only because their birth year (every age's limit holds) or their country
 * (every country's limit holds) is unknown. None when both are declared or no rule reads them.
 */
export function profileAssumptions(
  rules: ComplianceRules | undefined,
  profile: PlayerComplianceProfile,
  now: Date = new Date(),
): ProfileAssumption[] {
  if (!rules || (profile.country !== null && profile.birthYear !== null)) return [];
  return [...gateAssumptions(rules, profile), ...limitAssumptions(rules, profile, now)];
}

/** One assumption: see `profileAssumptions` (the contract's ProfileAssumptionSchema, in the domain's words). */
export interface ProfileAssumption {
  missing: ('country' | 'birth_year')[];
  effect: 'refused' | 'spend_limit';
  code?: 'blocked_in_region' | 'age_restricted';
  underAge?: number;
  countries?: string[];
  limit?: { period: SpendPeriod; limit: number; money?: string };
  rule?: RuleRef;
}

/** The gates (region, minimum age, a pack's age gate of a country) that refuse a gated paid currency for want of a country or birth year. */
function gateAssumptions(rules: ComplianceRules, profile: PlayerComplianceProfile): ProfileAssumption[] {
  if (!rules.paid_currencies.some((c) => isGatedCurrency(rules, c))) return [];
  const r = complianceInForce(rules);
  const out: ProfileAssumption[] = [];
  if (profile.country === null && r.blocked_regions.length > 0)
    out.push({ missing: ['country'], effect: 'refused', code: 'blocked_in_region', countries: [...r.blocked_regions] });
  if (profile.birthYear === null && (r.min_age ?? 0) > 0)
    out.push({ missing: ['birth_year'], effect: 'refused', code: 'age_restricted', underAge: r.min_age });
  for (const gate of r.regional_age_gates) {
    if (profile.birthYear !== null || (profile.country !== null && !gate.countries.includes(profile.country))) continue;
    const missing: ProfileAssumption['missing'] = profile.country === null ? ['birth_year', 'country'] : ['birth_year'];
    out.push({ missing, effect: 'refused', code: 'age_restricted', underAge: gate.min_age, countries: gate.countries, rule: gate.rule });
  }
  return out;
}

/** The strictest spend limits per money and period that hold the player only for what they have not declared. */
function limitAssumptions(rules: ComplianceRules, profile: PlayerComplianceProfile, now: Date): ProfileAssumption[] {
  const strictest = new Map<string, { l: SpendLimitInForce; period: SpendPeriod; limit: number }>();
  for (const l of complianceInForce(rules).spend_limits) {
    if (profile.birthYear !== null && guaranteedAge(profile.birthYear, now) > l.max_age) continue;
    if (l.countries && profile.country !== null && !l.countries.includes(profile.country)) continue;
    for (const [period, limit] of [
      ['day', l.per_day],
      ['month', l.per_month],
      ['payment', l.per_payment],
    ] as const) {
      const key = `${l.money ?? ''}:${period}`;
      if (limit !== undefined && limit < (strictest.get(key)?.limit ?? Infinity)) strictest.set(key, { l, period, limit });
    }
  }
  const out: ProfileAssumption[] = [];
  for (const { l, period, limit } of strictest.values()) {
    const missing: ProfileAssumption['missing'] = [];
    if (profile.birthYear === null) missing.push('birth_year');
    if (profile.country === null && l.countries) missing.push('country');
    if (!missing.length) continue;
    out.push({
      missing,
      effect: 'spend_limit',
      underAge: l.max_age + 1,
      ...(l.countries ? { countries: l.countries } : {}),
      limit: { period, limit, ...(l.money ? { money: l.money } : {}) },
      ...(l.rule ? { rule: l.rule } : {}),
    });
  }
  return out;
}

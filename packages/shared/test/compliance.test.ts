import { describe, expect, it } from 'vitest';
import {
  applicableMoneyLimits,
  applicableSpendLimits,
  ComplianceSchema,
  guaranteedAge,
  isCountryCode,
  isGatedCurrency,
  normalizeCountry,
  purchaseRefusal,
} from '../src/index.js';

/** The demo content's rules (docs/content.md, "Compliance"). */
const rules = ComplianceSchema.parse({ paid_currencies: ['gems'], blocked_regions: ['BE', 'NL'], min_age: 18 });
const in2026 = new Date('2026-06-30T12:00:00Z');

describe('compliance gates (pure)', () => {
  it('counts a birth year as the age surely reached this year: the birthday is assumed still to come', () => {
    expect(guaranteedAge(2008, in2026)).toBe(17);
    expect(guaranteedAge(2007, in2026)).toBe(18);
    expect(guaranteedAge(2008, new Date('2027-01-01T00:00:00Z'))).toBe(18);
    expect(guaranteedAge(2008, new Date('2026-12-31T23:59:59Z'))).toBe(17);
    expect(guaranteedAge(2026, in2026)).toBe(0);
  });

  it('refuses by region first, then by age; unknown attributes are refused; other currencies never', () => {
    const at = (country: string | null, birthYear: number | null, currency = 'gems') =>
      purchaseRefusal(rules, currency, { country, birthYear }, in2026);
    expect(at('DE', 1990)).toBeUndefined();
    expect(at('DE', 2007)).toBeUndefined();
    expect(at('BE', 2015)).toEqual({ code: 'blocked_in_region', reason: 'country_blocked' });
    expect(at(null, 1990)).toEqual({ code: 'blocked_in_region', reason: 'country_unknown' });
    expect(at('DE', 2008)).toEqual({ code: 'age_restricted', reason: 'under_min_age', minAge: 18 });
    expect(at('DE', null)).toEqual({ code: 'age_restricted', reason: 'birth_year_unknown', minAge: 18 });
    expect(at(null, null, 'coins')).toBeUndefined();
    expect(at('BE', 2015, 'coins')).toBeUndefined();
  });

  it('asks for only what the rules need', () => {
    const regionOnly = ComplianceSchema.parse({ paid_currencies: ['gems'], blocked_regions: ['BE'] });
    expect(purchaseRefusal(regionOnly, 'gems', { country: 'DE', birthYear: null }, in2026)).toBeUndefined();
    const ageOnly = ComplianceSchema.parse({ paid_currencies: ['gems'], min_age: 16 });
    expect(purchaseRefusal(ageOnly, 'gems', { country: null, birthYear: 2009 }, in2026)).toBeUndefined();
    expect(purchaseRefusal(ageOnly, 'gems', { country: null, birthYear: 2010 }, in2026)).toEqual({
      code: 'age_restricted',
      reason: 'under_min_age',
      minAge: 16,
    });
    // Paid currencies but no gate, or no rules at all: nothing to check (and no profile to read).
    expect(isGatedCurrency(ComplianceSchema.parse({ paid_currencies: ['gems'], min_age: 0 }), 'gems')).toBe(false);
    expect(isGatedCurrency(undefined, 'gems')).toBe(false);
    expect(isGatedCurrency(rules, 'gems')).toBe(true);
  });

  it('accepts assigned country codes in either case, and only those, in player input and in content', () => {
    expect(normalizeCountry('be')).toBe('BE');
    expect(normalizeCountry('Gb')).toBe('GB');
    expect(normalizeCountry('xk')).toBe('XK');
    for (const bad of ['UK', 'EU', 'XX', 'ZZ', 'DEU', 'D', '', ' DE', 'D3']) expect(normalizeCountry(bad), bad).toBeUndefined();
    expect(isCountryCode('de')).toBe(false);
    expect(ComplianceSchema.safeParse({ blocked_regions: ['UK'] }).success).toBe(false);
    expect(ComplianceSchema.safeParse({ blocked_regions: ['be'] }).success).toBe(false);
    expect(ComplianceSchema.safeParse({ blocked_regions: ['GB', 'BE'] }).success).toBe(true);
  });

  it("applies the rule packs' gates and names their rules: a blocked region, a country's minimum age, caps per payment", () => {
    const packs = ComplianceSchema.parse({ paid_currencies: ['gems'], rule_packs: ['NL', 'BR', 'CN'] });
    const at = (country: string | null, birthYear: number | null) => purchaseRefusal(packs, 'gems', { country, birthYear }, in2026);
    expect(at('NL', 1990)).toMatchObject({ code: 'blocked_in_region', reason: 'country_blocked', rule: { pack: 'NL' } });
    // Brazil under 18, China under 8; elsewhere (and for adults) no age gate.
    expect(at('BR', 2010)).toMatchObject({
      code: 'age_restricted',
      reason: 'under_min_age',
      minAge: 18,
      rule: { pack: 'BR', rule: 'no_paid_random_items_for_minors' },
    });
    expect(at('BR', 1990)).toBeUndefined();
    expect(at('CN', 2020)).toMatchObject({ code: 'age_restricted', minAge: 8, rule: { pack: 'CN', rule: 'no_payments_under_8' } });
    expect(at('CN', 2012)).toBeUndefined();
    expect(at('DE', 2015)).toBeUndefined();
    // A country not declared is refused where regions are blocked (NL); else it may be Brazil: a
    // minor, or an undeclared age, is held to its gate.
    expect(at(null, 2012)).toMatchObject({ code: 'blocked_in_region', reason: 'country_unknown' });
    const ages = ComplianceSchema.parse({ paid_currencies: ['gems'], rule_packs: ['BR', 'CN'] });
    expect(purchaseRefusal(ages, 'gems', { country: null, birthYear: 2012 }, in2026)).toMatchObject({ code: 'age_restricted', rule: { pack: 'BR' } });
    expect(purchaseRefusal(ages, 'gems', { country: null, birthYear: 1990 }, in2026)).toBeUndefined();
    expect(at('DE', null)).toBeUndefined();
    expect(at('BR', null)).toMatchObject({ code: 'age_restricted', reason: 'birth_year_unknown', rule: { pack: 'BR' } });
    // CN's caps for a 14-year-old, in CNY paid at the stores: 50 a payment, 200 a month, each
    // naming its rule; none in units of paid currency. Under 8: no payment at all.
    const cn = (birthYear: number | null) => applicableMoneyLimits(packs, { country: 'CN', birthYear }, in2026);
    expect(cn(2011)).toEqual([
      { period: 'month', limit: 200, money: 'CNY', rule: expect.objectContaining({ pack: 'CN', rule: 'minor_spend_limits_8_to_15' }) },
      { period: 'payment', limit: 50, money: 'CNY', rule: expect.objectContaining({ pack: 'CN', rule: 'minor_spend_limits_8_to_15' }) },
    ]);
    expect(applicableSpendLimits(packs, { country: 'CN', birthYear: 2011 }, in2026)).toEqual([]);
    expect(cn(2008)).toEqual([
      { period: 'month', limit: 400, money: 'CNY', rule: expect.objectContaining({ rule: 'minor_spend_limits_16_to_17' }) },
      { period: 'payment', limit: 100, money: 'CNY', rule: expect.objectContaining({ rule: 'minor_spend_limits_16_to_17' }) },
    ]);
    expect(cn(2020)).toEqual([
      { period: 'month', limit: 200, money: 'CNY', rule: expect.objectContaining({ rule: 'minor_spend_limits_8_to_15' }) },
      { period: 'payment', limit: 0, money: 'CNY', rule: expect.objectContaining({ rule: 'no_store_payments_under_8' }) },
    ]);
    // An undeclared birth year is held as the youngest: no payment.
    expect(cn(null)).toContainEqual(expect.objectContaining({ period: 'payment', limit: 0 }));
    expect(cn(2000)).toEqual([]);
    expect(applicableMoneyLimits(packs, { country: 'DE', birthYear: 2011 }, in2026)).toEqual([]);
    expect(isGatedCurrency(ComplianceSchema.parse({ paid_currencies: ['gems'], rule_packs: ['BR'] }), 'gems')).toBe(true);
  });
});

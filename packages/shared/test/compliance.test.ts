import { describe, expect, it } from 'vitest';
import { ComplianceSchema, guaranteedAge, isCountryCode, isGatedCurrency, normalizeCountry, purchaseRefusal } from '../src/index.js';

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
    expect(at('DE', 2008)).toEqual({ code: 'age_restricted', reason: 'under_min_age' });
    expect(at('DE', null)).toEqual({ code: 'age_restricted', reason: 'birth_year_unknown' });
    expect(at(null, null, 'coins')).toBeUndefined();
    expect(at('BE', 2015, 'coins')).toBeUndefined();
  });

  it('asks for only what the rules need', () => {
    const regionOnly = ComplianceSchema.parse({ paid_currencies: ['gems'], blocked_regions: ['BE'] });
    expect(purchaseRefusal(regionOnly, 'gems', { country: 'DE', birthYear: null }, in2026)).toBeUndefined();
    const ageOnly = ComplianceSchema.parse({ paid_currencies: ['gems'], min_age: 16 });
    expect(purchaseRefusal(ageOnly, 'gems', { country: null, birthYear: 2009 }, in2026)).toBeUndefined();
    expect(purchaseRefusal(ageOnly, 'gems', { country: null, birthYear: 2010 }, in2026)).toEqual({ code: 'age_restricted', reason: 'under_min_age' });
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
});

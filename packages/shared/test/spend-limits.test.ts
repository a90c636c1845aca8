import { describe, expect, it } from 'vitest';
import { applicableSpendLimits, ComplianceSchema, isGatedCurrency, purchaseRefusal } from '../src/index.js';

const in2026 = new Date('2026-06-30T12:00:00Z');
const rules = ComplianceSchema.parse({
  paid_currencies: ['gems'],
  spend_limits: [
    { max_age: 17, per_day: 100, per_month: 1000 },
    { max_age: 15, per_day: 50, countries: ['CN'] },
    { max_age: 12, per_month: 300, countries: ['CN'] },
  ],
});

describe('spend limits (pure)', () => {
  it('make a paid currency gated without refusing anyone: the limits are applied when paying', () => {
    expect(isGatedCurrency(rules, 'gems')).toBe(true);
    expect(isGatedCurrency(rules, 'coins')).toBe(false);
    expect(purchaseRefusal(rules, 'gems', { country: null, birthYear: null }, in2026)).toBeUndefined();
  });

  it('hold a player to the strictest limit per period of those covering their age (as surely reached) and country', () => {
    const at = (country: string | null, birthYear: number | null) => applicableSpendLimits(rules, { country, birthYear }, in2026);
    expect(at('DE', 1990)).toEqual([]);
    expect(at('DE', 2008)).toEqual([
      { period: 'day', limit: 100 },
      { period: 'month', limit: 1000 },
    ]); // counts as 17 all of 2026
    expect(at('DE', 2007)).toEqual([]); // 18 from 1 January 2026
    expect(at('CN', 2011)).toEqual([
      { period: 'day', limit: 50 },
      { period: 'month', limit: 1000 },
    ]);
    expect(at('CN', 2014)).toEqual([
      { period: 'day', limit: 50 },
      { period: 'month', limit: 300 },
    ]);
  });

  it('hold an unknown birth year or country to every limit that could apply', () => {
    expect(applicableSpendLimits(rules, { country: 'DE', birthYear: null }, in2026)).toEqual([
      { period: 'day', limit: 100 },
      { period: 'month', limit: 1000 },
    ]);
    expect(applicableSpendLimits(rules, { country: null, birthYear: 2014 }, in2026)).toEqual([
      { period: 'day', limit: 50 },
      { period: 'month', limit: 300 },
    ]);
    expect(applicableSpendLimits(undefined, { country: null, birthYear: null }, in2026)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  applicableMoneyLimits,
  applicableSpendLimits,
  ComplianceSchema,
  isGatedCurrency,
  moneyIn,
  moneyPaymentRefusal,
  moneyStandings,
  type StoreMoneyTotals,
} from '../src/index.js';

const in2026 = new Date('2026-06-30T12:00:00Z');
const rules = ComplianceSchema.parse({
  paid_currencies: ['gems'],
  spend_limits: [
    { max_age: 17, per_day: 60, countries: ['DE'] },
    { max_age: 17, per_month: 200, per_payment: 50, countries: ['CN'], money: 'CNY' },
    { max_age: 15, per_month: 150, countries: ['CN'], money: 'CNY' },
    { max_age: 17, per_day: 20, money: 'EUR' },
  ],
  money_rates: { CNY: { USD: 7.1, EUR: 7.7 } },
});

const totals = (day: Record<string, string>, month: Record<string, string>): StoreMoneyTotals => ({
  day: { spent: Object.entries(day).map(([currency, amount]) => ({ currency, amount })), resetsAt: '2026-07-01T00:00:00.000Z' },
  month: { spent: Object.entries(month).map(([currency, amount]) => ({ currency, amount })), resetsAt: '2026-07-01T00:00:00.000Z' },
});

describe('spend limits in money (pure)', () => {
  it('are apart from the limits in units: they neither gate paid currency nor count as its limits', () => {
    const moneyOnly = ComplianceSchema.parse({ paid_currencies: ['gems'], spend_limits: [{ max_age: 17, per_month: 200, money: 'CNY' }] });
    expect(isGatedCurrency(moneyOnly, 'gems')).toBe(false);
    expect(applicableSpendLimits(moneyOnly, { country: null, birthYear: null }, in2026)).toEqual([]);
    expect(applicableSpendLimits(rules, { country: 'DE', birthYear: 2011 }, in2026)).toEqual([{ period: 'day', limit: 60 }]);
  });

  it('hold a player per money to the strictest per period, decided by age and country as the limits in units are', () => {
    const at = (country: string | null, birthYear: number | null) => applicableMoneyLimits(rules, { country, birthYear }, in2026);
    expect(at('CN', 2012)).toEqual([
      { period: 'month', limit: 150, money: 'CNY' },
      { period: 'payment', limit: 50, money: 'CNY' },
      { period: 'day', limit: 20, money: 'EUR' },
    ]);
    expect(at('CN', 2008)).toEqual([
      { period: 'month', limit: 200, money: 'CNY' },
      { period: 'payment', limit: 50, money: 'CNY' },
      { period: 'day', limit: 20, money: 'EUR' },
    ]);
    expect(at('DE', 2008)).toEqual([{ period: 'day', limit: 20, money: 'EUR' }]);
    expect(at('CN', 1990)).toEqual([]);
    // Unknown: held to every limit that could apply.
    expect(at(null, null)).toEqual(at('CN', 2012));
  });

  it('convert by the rate table: units of the limit money per unit of the other currency', () => {
    expect(moneyIn({ amount: '4.99', currency: 'USD' }, 'CNY', rules.money_rates)).toBeCloseTo(35.429);
    expect(moneyIn({ amount: '30', currency: 'CNY' }, 'CNY', undefined)).toBe(30);
    expect(moneyIn({ amount: '1', currency: 'JPY' }, 'CNY', rules.money_rates)).toBeUndefined();
    // No inverse is inferred: a USD limit needs its own rates.
    expect(moneyIn({ amount: '1', currency: 'CNY' }, 'USD', rules.money_rates)).toBeUndefined();
  });

  it('show the standing of each limit, the currencies no rate converts left out of spent and named', () => {
    const limits = applicableMoneyLimits(rules, { country: 'CN', birthYear: 2008 }, in2026).filter((l) => l.money === 'CNY');
    expect(moneyStandings(limits, totals({ CNY: '30' }, { CNY: '80', USD: '4.99', JPY: '600' }), rules.money_rates)).toEqual([
      {
        period: 'month',
        limit: 200,
        spent: 115.43,
        remaining: 84.57,
        resetsAt: '2026-07-01T00:00:00.000Z',
        money: 'CNY',
        unverifiable: ['JPY'],
      },
      { period: 'payment', limit: 50, spent: 0, remaining: 50, resetsAt: null, money: 'CNY' },
    ]);
  });

  it('refuse a payment past a limit, one that cannot be counted, and any payment under a limit of 0', () => {
    const limits = applicableMoneyLimits(rules, { country: 'CN', birthYear: 2008 }, in2026).filter((l) => l.money === 'CNY');
    const rates = rules.money_rates;
    const pay = (amount: string, currency: string, t = totals({}, { CNY: '150' })) => moneyPaymentRefusal(limits, t, rates, { amount, currency });
    expect(pay('50', 'CNY')).toBeUndefined();
    expect(pay('50.01', 'CNY', totals({}, {}))).toMatchObject({ code: 'spend_limit_reached', standing: { period: 'payment', limit: 50 } });
    expect(pay('7', 'USD')).toBeUndefined(); // 49.7 CNY: 199.7 of 200
    expect(pay('7.05', 'USD')).toMatchObject({ code: 'spend_limit_reached', standing: { period: 'month', spent: 150 } });
    expect(pay('1', 'JPY')).toMatchObject({ code: 'spend_limit_unverifiable', currency: 'JPY', standing: { period: 'month' } });
    expect(moneyPaymentRefusal(limits, totals({}, {}), rates, null)).toMatchObject({ code: 'spend_limit_unverifiable', currency: null });
    // An earlier transaction no rate converts: the month cannot be counted.
    expect(pay('1', 'CNY', totals({}, { GBP: '2' }))).toMatchObject({ code: 'spend_limit_unverifiable', currency: 'GBP' });
    const none = [{ period: 'payment' as const, limit: 0, money: 'CNY' }];
    expect(moneyPaymentRefusal(none, totals({}, {}), rates, { amount: '1', currency: 'JPY' })).toMatchObject({ code: 'spend_limit_reached' });
    expect(moneyPaymentRefusal(none, totals({}, {}), rates, { amount: '0', currency: 'CNY' })).toBeUndefined();
  });

  it('are content: a money code, rates per money, and per_payment for any limit', () => {
    const parse = (c: Record<string, unknown>) => ComplianceSchema.safeParse({ paid_currencies: ['gems'], ...c }).success;
    expect(parse({ spend_limits: [{ max_age: 17, per_payment: 50, money: 'CNY' }] })).toBe(true);
    expect(parse({ spend_limits: [{ max_age: 17, per_payment: 50 }] })).toBe(true);
    expect(parse({ spend_limits: [{ max_age: 17, money: 'CNY' }] })).toBe(false);
    expect(parse({ spend_limits: [{ max_age: 17, per_month: 50, money: 'cny' }] })).toBe(false);
    expect(parse({ spend_limits: [{ max_age: 17, per_month: 0, money: 'CNY' }] })).toBe(false);
    expect(parse({ money_rates: { CNY: { USD: 7.1 } } })).toBe(true);
    expect(parse({ money_rates: { CNY: { USD: 0 } } })).toBe(false);
    expect(parse({ money_rates: { CNY: { usd: 7.1 } } })).toBe(false);
    expect(parse({ money_rates: { CNY: 7.1 } })).toBe(false);
  });
});

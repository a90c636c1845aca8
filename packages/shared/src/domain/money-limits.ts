import type { ComplianceRules } from '../contracts/content.js';
import type { SpendStanding } from '../contracts/spend-limits.js';
import type { Money, StoreMoneyTotals } from '../contracts/store.js';
import type { ApplicableSpendLimit } from './compliance.js';

/**
 * Spend limits in money (a spend limit with `money`): they count what a player paid in verified
 * store transactions, refunded ones left out, converted into the limit's money. The store checks a
 * transaction against them before granting it; chests shows the standing with the player's other
 * limits. Which limits hold a player is `applicableMoneyLimits` (compliance.ts).
 */

/** `compliance.money_rates`: per limit's money, units of it per unit of another currency. */
export type MoneyRates = NonNullable<ComplianceRules['money_rates']>;

/** Amounts are counted to the cent: sums of doubles rounded back to two decimals. */
const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * `m` counted in `money`: as is in the same money, else by the rate table (units of `money` per
 * unit of `m.currency`); undefined when the table has no rate for it.
 */
export function moneyIn(m: Money, money: string, rates: MoneyRates | undefined): number | undefined {
  if (m.currency === money) return Number(m.amount);
  const rate = rates?.[money]?.[m.currency];
  return rate === undefined ? undefined : Number(m.amount) * rate;
}

/**
 * Each limit in money (`limits` from `applicableMoneyLimits`) with the player's standing: the
 * period's transactions converted into the limit's money and added up (to the cent), what
 * remains, when the period ends; the currencies no rate converts are left out of `spent` and
 * listed as `unverifiable`. A cap per payment accumulates nothing.
 */
export function moneyStandings(limits: ApplicableSpendLimit[], totals: StoreMoneyTotals, rates: MoneyRates | undefined): SpendStanding[] {
  return limits.map(({ period, limit, money, rule }) => {
    const t = period === 'payment' ? undefined : totals[period];
    let spent = 0;
    const unverifiable: string[] = [];
    for (const m of t?.spent ?? []) {
      const counted = moneyIn(m, money!, rates);
      if (counted === undefined) unverifiable.push(m.currency);
      else spent += counted;
    }
    spent = round2(spent);
    return {
      period,
      limit,
      spent,
      remaining: Math.max(0, round2(limit - spent)),
      resetsAt: t ? t.resetsAt : null,
      money: money!,
      ...(unverifiable.length ? { unverifiable } : {}),
      ...(rule ? { rule } : {}),
    };
  });
}

/** Why a store payment may not be granted under the player's limits in money. */
export type MoneyRefusal =
  /** The payment, or a transaction already counted in the period, is in a currency the limit cannot count (null: the store reported no price). */
  | { code: 'spend_limit_unverifiable'; currency: string | null; standing: SpendStanding }
  /** The payment would pass the limit. */
  | { code: 'spend_limit_reached'; standing: SpendStanding };

/**
 * Why a store payment of `price` may not be granted to a player held to `limits` (in money) who
 * spent `totals` so far, or undefined when it fits every one. A limit of 0 refuses any payment,
 * whatever its currency. Then a limit that cannot be counted, whichever it is: the payment's own
 * currency (or a missing price) or an earlier transaction's that the rate table does not convert.
 * Then the first limit the payment would pass (per money, the day's before the month's before the
 * cap per payment).
 */
export function moneyPaymentRefusal(
  limits: ApplicableSpendLimit[],
  totals: StoreMoneyTotals,
  rates: MoneyRates | undefined,
  price: Money | null,
): MoneyRefusal | undefined {
  const standings = moneyStandings(limits, totals, rates);
  const nothingAllowed = standings.find((s) => s.limit === 0);
  if (nothingAllowed && (!price || Number(price.amount) > 0)) return { code: 'spend_limit_reached', standing: nothingAllowed };
  for (const standing of standings) {
    if (!price || moneyIn(price, standing.money!, rates) === undefined)
      return { code: 'spend_limit_unverifiable', currency: price?.currency ?? null, standing };
    if (standing.unverifiable) return { code: 'spend_limit_unverifiable', currency: standing.unverifiable[0]!, standing };
  }
  for (const standing of standings) {
    const counted = moneyIn(price!, standing.money!, rates)!;
    if (round2(standing.spent + counted) > standing.limit) return { code: 'spend_limit_reached', standing };
  }
  return undefined;
}

import type { ApplicableSpendLimit, Queryable, SpendPeriod, SpendStanding } from '@ccs/shared';

/** Payments that count towards a player's spend: all but those released (failed, refunded). Migration 0014. */
const COUNTED = "status IN ('pending', 'debited', 'completed', 'compensating')";

/** What a player spent in the current UTC day and month (in units of the paid currencies), and when each ends. */
export interface SpendTotals {
  day: { spent: number; resetsAt: Date };
  month: { spent: number; resetsAt: Date };
}

/**
 * The player's spend in `currencies` (the paid ones) in the current UTC day and month, by the
 * database's clock (the one payments' `created_at` is written with).
 */
export async function spendTotals(db: Queryable, appId: string, playerId: string, currencies: string[]): Promise<SpendTotals> {
  const r = await db.query<{ day: string; month: string; day_end: Date; month_end: Date }>(
    `WITH b AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day_start,
                       date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month_start)
     SELECT COALESCE(sum(p.amount) FILTER (WHERE p.created_at >= b.day_start), 0)::text AS day,
            COALESCE(sum(p.amount), 0)::text AS month,
            (SELECT (day_start AT TIME ZONE 'UTC' + interval '1 day') AT TIME ZONE 'UTC' FROM b) AS day_end,
            (SELECT (month_start AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC' FROM b) AS month_end
       FROM b LEFT JOIN payments p
         ON p.app_id = $1 AND p.player_id = $2 AND p.currency = ANY($3::text[]) AND p.created_at >= b.month_start AND p.${COUNTED}
      GROUP BY b.day_start, b.month_start`,
    [appId, playerId, currencies],
  );
  const row = r.rows[0]!;
  return { day: { spent: Number(row.day), resetsAt: row.day_end }, month: { spent: Number(row.month), resetsAt: row.month_end } };
}

/** Serializes one player's reservations against their spend limits (the sum is read, then a payment recorded). */
export async function lockPlayerSpend(tx: Queryable, appId: string, playerId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('chests-spend:' || $1 || ':' || $2, 0))", [appId, playerId]);
}

/** Each limit with the player's standing against it. */
export function standings(limits: ApplicableSpendLimit[], totals: SpendTotals): SpendStanding[] {
  return limits.map(({ period, limit, rule }) => {
    // A cap per payment: nothing accumulates against it.
    const t = period === 'payment' ? undefined : totals[period satisfies Exclude<SpendPeriod, 'payment'>];
    const spent = t?.spent ?? 0;
    return {
      period,
      limit,
      spent,
      remaining: Math.max(0, round2(limit - spent)),
      resetsAt: t ? t.resetsAt.toISOString() : null,
      ...(rule ? { rule } : {}),
    };
  });
}

/** The first limit that `amount` more would exceed, with its standing; undefined when it fits all. */
export function exceeded(limits: ApplicableSpendLimit[], totals: SpendTotals, amount: number): SpendStanding | undefined {
  return standings(limits, totals).find((s) => round2(s.spent + amount) > s.limit);
}

/** Amounts have two decimals (numeric(20, 2)): sums of doubles rounded back to them. */
const round2 = (n: number): number => Math.round(n * 100) / 100;

import type { Queryable } from '@ccs/shared';

/** The actor support's steps are logged under in a trade's audit log (trade_log). */
export const SUPPORT_ACTOR = 'support';

/** Of these trades, the ones support cancelled (their audit log has support's cancel). */
export async function cancelledBySupport(q: Queryable, tradeIds: string[]): Promise<Set<string>> {
  if (tradeIds.length === 0) return new Set();
  const r = await q.query<{ trade_id: string }>(
    `SELECT DISTINCT trade_id FROM trade_log WHERE trade_id = ANY($1::uuid[]) AND actor = $2 AND action = 'cancel'`,
    [tradeIds, SUPPORT_ACTOR],
  );
  return new Set(r.rows.map((row) => row.trade_id));
}

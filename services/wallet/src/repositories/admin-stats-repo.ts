import type { Queryable } from '@ccs/shared';

/** Per live currency of an app: the sum of all balances and how many players hold some. */
export async function balanceTotals(q: Queryable, appId: string): Promise<{ code: string; name: string; total: string; holders: number }[]> {
  const { rows } = await q.query<{ code: string; name: string; total: string; holders: number }>(
    `SELECT c.code, c.name, coalesce(sum(b.amount), 0)::numeric(20, 2)::text AS total,
            (count(b.player_id) FILTER (WHERE b.amount > 0))::int AS holders
     FROM currencies c LEFT JOIN balances b ON b.app_id = c.app_id AND b.currency_id = c.id
     WHERE c.app_id = $1 AND c.retired_at IS NULL
     GROUP BY c.id ORDER BY c.position, c.code`,
    [appId],
  );
  return rows;
}

/** Sources and sinks of the last 24 hours: per currency and ledger reason, the sums credited and debited. */
export async function ledgerFlows(q: Queryable, appId: string): Promise<{ code: string; reason: string; credited: string; debited: string }[]> {
  const { rows } = await q.query<{ code: string; reason: string; credited: string; debited: string }>(
    `SELECT c.code, l.reason,
            coalesce(sum(l.delta) FILTER (WHERE l.delta > 0), 0)::numeric(20, 2)::text AS credited,
            coalesce(-sum(l.delta) FILTER (WHERE l.delta < 0), 0)::numeric(20, 2)::text AS debited
       FROM ledger l JOIN currencies c ON c.app_id = l.app_id AND c.id = l.currency_id
      WHERE l.app_id = $1 AND l.created_at > now() - interval '24 hours'
      GROUP BY c.code, l.reason ORDER BY c.code, l.reason`,
    [appId],
  );
  return rows;
}

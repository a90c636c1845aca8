import type { Queryable } from '@ccs/shared';

/** An app's chests (unopened, opened), openings of the last 24 hours and purchases by outcome. */
export async function chestFigures(q: Queryable, appId: string) {
  const { rows } = await q.query<{
    unopened: number;
    opened: number;
    last24h: number;
    completed: number;
    unsettled: number;
    refunded: number;
    failed: number;
  }>(
    `SELECT
       (SELECT count(*) FROM inventory_chests WHERE app_id = $1 AND opened_at IS NULL)::int AS unopened,
       (SELECT count(*) FROM openings WHERE app_id = $1)::int AS opened,
       (SELECT count(*) FROM openings WHERE app_id = $1 AND opened_at > now() - interval '24 hours')::int AS last24h,
       (SELECT count(*) FROM payments WHERE app_id = $1 AND kind = 'purchase' AND status = 'completed')::int AS completed,
       (SELECT count(*) FROM payments WHERE app_id = $1 AND kind = 'purchase' AND status IN ('pending', 'debited', 'compensating'))::int AS unsettled,
       (SELECT count(*) FROM payments WHERE app_id = $1 AND kind = 'purchase' AND status = 'refunded')::int AS refunded,
       (SELECT count(*) FROM payments WHERE app_id = $1 AND kind = 'purchase' AND status = 'failed')::int AS failed`,
    [appId],
  );
  const r = rows[0]!;
  return {
    chests: { unopened: r.unopened, opened: r.opened },
    openingsLast24h: r.last24h,
    purchases: { completed: r.completed, unsettled: r.unsettled, refunded: r.refunded, failed: r.failed },
    hourly: await hourlyFigures(q, appId),
  };
}

/** Openings and completed purchases of the last 24 hours, hour by hour (empty hours included). */
async function hourlyFigures(q: Queryable, appId: string): Promise<{ hour: string; openings: number; purchases: number }[]> {
  const { rows } = await q.query<{ hour: Date; openings: number; purchases: number }>(
    `SELECT h.hour,
            (SELECT count(*) FROM openings o WHERE o.app_id = $1 AND o.opened_at >= h.hour AND o.opened_at < h.hour + interval '1 hour')::int AS openings,
            (SELECT count(*) FROM payments p WHERE p.app_id = $1 AND p.kind = 'purchase' AND p.status = 'completed'
                AND p.created_at >= h.hour AND p.created_at < h.hour + interval '1 hour')::int AS purchases
       FROM generate_series(date_trunc('hour', now()) - interval '23 hours', date_trunc('hour', now()), interval '1 hour') AS h(hour)
      ORDER BY h.hour`,
    [appId],
  );
  return rows.map((r) => ({ hour: r.hour.toISOString(), openings: r.openings, purchases: r.purchases }));
}

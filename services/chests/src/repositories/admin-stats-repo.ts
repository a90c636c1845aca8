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
       (SELECT count(*) FROM purchases WHERE app_id = $1 AND status = 'completed')::int AS completed,
       (SELECT count(*) FROM purchases WHERE app_id = $1 AND status IN ('pending', 'debited', 'compensating'))::int AS unsettled,
       (SELECT count(*) FROM purchases WHERE app_id = $1 AND status = 'refunded')::int AS refunded,
       (SELECT count(*) FROM purchases WHERE app_id = $1 AND status = 'failed')::int AS failed`,
    [appId],
  );
  const r = rows[0]!;
  return {
    chests: { unopened: r.unopened, opened: r.opened },
    openingsLast24h: r.last24h,
    purchases: { completed: r.completed, unsettled: r.unsettled, refunded: r.refunded, failed: r.failed },
  };
}

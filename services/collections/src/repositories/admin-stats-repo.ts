import type { Queryable } from '@ccs/shared';

/** An app's granted items, the openings they came from and how many players hold any. */
export async function grantFigures(q: Queryable, appId: string): Promise<{ itemsGranted: number; openingsGranted: number; collectors: number }> {
  const { rows } = await q.query<{ items: number; openings: number; collectors: number }>(
    `SELECT count(*)::int AS items, count(DISTINCT opening_id)::int AS openings, count(DISTINCT player_id)::int AS collectors
     FROM owned_collectibles WHERE app_id = $1`,
    [appId],
  );
  const r = rows[0]!;
  return { itemsGranted: r.items, openingsGranted: r.openings, collectors: r.collectors };
}

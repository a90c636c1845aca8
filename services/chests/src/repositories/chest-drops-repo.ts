import type { Queryable } from '@ccs/shared';

/** What the kept openings of one chest type drew: how many, since when, and items per rarity. */
export interface DrawnItems {
  openings: number;
  since: Date | null;
  rarities: { rarity: string; count: number }[];
}

/** The app's openings of a chest type and their items per rarity (index openings_chest_type); reads only. */
export async function drawnItems(q: Queryable, appId: string, chestTypeId: string): Promise<DrawnItems> {
  const [totals, rarities] = await Promise.all([
    q.query<{ n: number; since: Date | null }>(
      'SELECT count(*)::int AS n, min(opened_at) AS since FROM openings WHERE app_id = $1 AND chest_type_id = $2',
      [appId, chestTypeId],
    ),
    q.query<{ rarity: string; n: number }>(
      `SELECT it->>'rarity' AS rarity, count(*)::int AS n
         FROM openings o CROSS JOIN LATERAL jsonb_array_elements(o.items) it
        WHERE o.app_id = $1 AND o.chest_type_id = $2
        GROUP BY 1 ORDER BY 1`,
      [appId, chestTypeId],
    ),
  ]);
  return {
    openings: totals.rows[0]!.n,
    since: totals.rows[0]!.since,
    rarities: rarities.rows.map((r) => ({ rarity: r.rarity, count: r.n })),
  };
}

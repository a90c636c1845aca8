import type { Queryable } from '@ccs/shared';

/** What the kept openings of one chest type drew: how many, since when, and items per rarity. */
export interface DrawnItems {
  openings: number;
  since: Date | null;
  rarities: { rarity: string; count: number }[];
}

/**
 * The app's openings of a chest type and their items per rarity (index openings_chest_type); reads
 * only. With `rulesVersion`, only the openings rolled under that content version's rules. Banner
 * pulls' openings are left out: the ten-pull floor and the featured rate-up make them a draw of
 * their own, judged against the banner's figures (GET /api/v1/admin/banners/{id}/stats).
 */
export async function drawnItems(q: Queryable, appId: string, chestTypeId: string, rulesVersion?: number): Promise<DrawnItems> {
  const version = rulesVersion === undefined ? '' : ' AND content_version = $3';
  const params = rulesVersion === undefined ? [appId, chestTypeId] : [appId, chestTypeId, rulesVersion];
  const [totals, rarities] = await Promise.all([
    q.query<{ n: number; since: Date | null }>(
      `SELECT count(*)::int AS n, min(opened_at) AS since FROM openings WHERE app_id = $1 AND chest_type_id = $2 AND banner IS NULL${version}`,
      params,
    ),
    q.query<{ rarity: string; n: number }>(
      `SELECT it->>'rarity' AS rarity, count(*)::int AS n
         FROM openings o CROSS JOIN LATERAL jsonb_array_elements(o.items) it
        WHERE o.app_id = $1 AND o.chest_type_id = $2 AND o.banner IS NULL${version.replace('content_version', 'o.content_version')}
        GROUP BY 1 ORDER BY 1`,
      params,
    ),
  ]);
  return {
    openings: totals.rows[0]!.n,
    since: totals.rows[0]!.since,
    rarities: rarities.rows.map((r) => ({ rarity: r.rarity, count: r.n })),
  };
}

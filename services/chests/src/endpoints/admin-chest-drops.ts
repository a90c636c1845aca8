import { AdminChestDrops, endpoint } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';

/**
 * Admin API (a chest's observed drops): how many openings of a chest type the app kept, and how
 * many items of each rarity they drew. One aggregate over the type's openings (index
 * openings_chest_type); reads only.
 */
export function adminChestDropsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminChestDrops, async ({ appId, chestTypeId }) => {
    const [totals, rarities] = await Promise.all([
      deps.pool.query<{ n: number; since: Date | null }>(
        'SELECT count(*)::int AS n, min(opened_at) AS since FROM openings WHERE app_id = $1 AND chest_type_id = $2',
        [appId, chestTypeId],
      ),
      deps.pool.query<{ rarity: string; n: number }>(
        `SELECT it->>'rarity' AS rarity, count(*)::int AS n
           FROM openings o CROSS JOIN LATERAL jsonb_array_elements(o.items) it
          WHERE o.app_id = $1 AND o.chest_type_id = $2
          GROUP BY 1 ORDER BY 1`,
        [appId, chestTypeId],
      ),
    ]);
    return {
      openings: totals.rows[0]!.n,
      since: totals.rows[0]!.since?.toISOString() ?? null,
      rarities: rarities.rows.map((r) => ({ rarity: r.rarity, count: r.n })),
    };
  });
}

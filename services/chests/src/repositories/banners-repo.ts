import type { Queryable } from '@ccs/shared';

/** A player's standing on a banner: the group's guarantee flag and pity counter, the banner's pulls and spark points. */
export interface BannerStandingRow {
  /** Pulls (openings) made on this banner. */
  pulls: number;
  sparkPoints: number;
  guaranteedFeatured: boolean;
  /** The group's pity counter (openings since the pity rarity or better). */
  pity: number;
}

/** The caller's standing on banner `banner` of pity group `group` (zeros before their first pull). */
export async function readBannerStanding(db: Queryable, appId: string, playerId: string, group: string, banner: string): Promise<BannerStandingRow> {
  const r = await db.query<{ guaranteed_featured: boolean | null; opens_since: number | null; pulls: number | null; points: number | null }>(
    `SELECT s.guaranteed_featured, s.opens_since, k.pulls, k.points
       FROM (SELECT 1) one
       LEFT JOIN banner_standings s ON s.app_id = $1 AND s.player_id = $2 AND s.pity_group = $3
       LEFT JOIN banner_sparks k ON k.app_id = $1 AND k.player_id = $2 AND k.banner = $4`,
    [appId, playerId, group, banner],
  );
  const row = r.rows[0]!;
  return { pulls: row.pulls ?? 0, sparkPoints: row.points ?? 0, guaranteedFeatured: row.guaranteed_featured ?? false, pity: row.opens_since ?? 0 };
}

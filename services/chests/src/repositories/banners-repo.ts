import type { Queryable } from '@ccs/shared';

/**
 * A player's standing in a banner pity group (docs/design.md §8), carried across the group's banners:
 * the pulls, the spark points, the guarantee flag and the pity counter (zeros before the first pull).
 */
export interface BannerStandingRow {
  /** Pulls (openings) made on the group's banners. */
  pulls: number;
  sparkPoints: number;
  guaranteedFeatured: boolean;
  /** The group's pity counter (openings since the pity rarity or better). */
  pity: number;
}

interface StandingRow {
  pity_group: string;
  guaranteed_featured: boolean;
  opens_since: number;
  pulls: number;
  spark_points: number;
}

/** A player's standing in a group before their first pull of it. */
export const NO_STANDING: BannerStandingRow = { pulls: 0, sparkPoints: 0, guaranteedFeatured: false, pity: 0 };

const toStanding = (r: StandingRow): BannerStandingRow => ({
  pulls: r.pulls,
  sparkPoints: r.spark_points,
  guaranteedFeatured: r.guaranteed_featured,
  pity: r.opens_since,
});

/** The caller's standing in pity group `group`. */
export async function readBannerStanding(db: Queryable, appId: string, playerId: string, group: string): Promise<BannerStandingRow> {
  return (await readBannerStandings(db, appId, playerId, [group])).get(group) ?? NO_STANDING;
}

/** The caller's standings in the groups named (absent: no pull yet). */
export async function readBannerStandings(db: Queryable, appId: string, playerId: string, groups: string[]): Promise<Map<string, BannerStandingRow>> {
  const r = await db.query<StandingRow>(
    `SELECT pity_group, guaranteed_featured, opens_since, pulls, spark_points FROM banner_standings
      WHERE app_id = $1 AND player_id = $2 AND pity_group = ANY($3::text[])`,
    [appId, playerId, groups],
  );
  return new Map(r.rows.map((row) => [row.pity_group, toStanding(row)]));
}

/**
 * Writes what banner openings moved, in the openings' transaction (after their compare-and-set
 * succeeded): each group's flag and counter as rolled, and the pulls and spark points added
 * (added, not set: a spark exchange may take points meanwhile, and takes no nonce). Returns each
 * group's spark points as stored by this write (the row stays locked until the commit, so no
 * exchange can change them before the openings are committed).
 */
export async function recordBannerStandings(
  tx: Queryable,
  appId: string,
  playerId: string,
  moved: { group: string; guaranteedFeatured: boolean; pity: number; pulls: number }[],
): Promise<Map<string, number>> {
  const groups = moved.map((m) => ({ pity_group: m.group, guaranteed: m.guaranteedFeatured, pity: m.pity, pulls: m.pulls }));
  const r = await tx.query<{ pity_group: string; spark_points: number }>(
    `INSERT INTO banner_standings (app_id, player_id, pity_group, guaranteed_featured, opens_since, pulls, spark_points)
     SELECT $1, $2, x.pity_group, x.guaranteed, x.pity, x.pulls, x.pulls
       FROM jsonb_to_recordset($3::jsonb) AS x(pity_group text, guaranteed boolean, pity integer, pulls integer)
     ON CONFLICT (app_id, player_id, pity_group) DO UPDATE SET
       guaranteed_featured = EXCLUDED.guaranteed_featured, opens_since = EXCLUDED.opens_since,
       pulls = banner_standings.pulls + EXCLUDED.pulls, spark_points = banner_standings.spark_points + EXCLUDED.spark_points,
       updated_at = now()
     RETURNING pity_group, spark_points`,
    [appId, playerId, JSON.stringify(groups)],
  );
  return new Map(r.rows.map((row) => [row.pity_group, row.spark_points]));
}

/**
 * Takes `cost` of the player's spark points in a pity group, only while at least that many are
 * left (one conditional UPDATE: of racing exchanges, only those the points cover succeed).
 * Returns the points after, or the points held when they were too few.
 */
export async function takeSparkPoints(
  tx: Queryable,
  appId: string,
  playerId: string,
  group: string,
  cost: number,
): Promise<{ ok: boolean; points: number }> {
  const r = await tx.query<{ spark_points: number }>(
    `UPDATE banner_standings SET spark_points = spark_points - $4, updated_at = now()
      WHERE app_id = $1 AND player_id = $2 AND pity_group = $3 AND spark_points >= $4
      RETURNING spark_points`,
    [appId, playerId, group, cost],
  );
  if (r.rows[0]) return { ok: true, points: r.rows[0].spark_points };
  return { ok: false, points: (await readBannerStanding(tx, appId, playerId, group)).sparkPoints };
}

/** A spark exchange as recorded. */
export interface SparkExchangeRow {
  id: string;
  banner: string;
  collectibleId: string;
  cost: number;
  pointsAfter: number;
  createdAt: string;
}

export async function insertSparkExchange(
  tx: Queryable,
  e: {
    id: string;
    appId: string;
    playerId: string;
    banner: string;
    group: string;
    collectibleId: string;
    cost: number;
    pointsAfter: number;
    idempotencyKey?: string;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO spark_exchanges (id, app_id, player_id, banner, pity_group, collectible_id, cost, points_after, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [e.id, e.appId, e.playerId, e.banner, e.group, e.collectibleId, e.cost, e.pointsAfter, e.idempotencyKey ?? null],
  );
}

/** The player's exchange made with an Idempotency-Key, if any. */
export async function findSparkExchange(db: Queryable, appId: string, playerId: string, key: string): Promise<SparkExchangeRow | undefined> {
  const r = await db.query<{ id: string; banner: string; collectible_id: string; cost: number; points_after: number; created_at: Date }>(
    'SELECT id, banner, collectible_id, cost, points_after, created_at FROM spark_exchanges WHERE app_id = $1 AND player_id = $2 AND idempotency_key = $3',
    [appId, playerId, key],
  );
  const row = r.rows[0];
  return (
    row && {
      id: row.id,
      banner: row.banner,
      collectibleId: row.collectible_id,
      cost: row.cost,
      pointsAfter: row.points_after,
      createdAt: row.created_at.toISOString(),
    }
  );
}

/** The (app, pity group) pairs where some player still holds spark points (the partial index banner_standings_unsettled). */
export async function groupsWithSparkPoints(db: Queryable): Promise<{ appId: string; group: string }[]> {
  const r = await db.query<{ app_id: string; pity_group: string }>('SELECT DISTINCT app_id, pity_group FROM banner_standings WHERE spark_points > 0');
  return r.rows.map((row) => ({ appId: row.app_id, group: row.pity_group }));
}

/**
 * Settles up to `limit` players' spark points in a pity group (rows another transaction holds are
 * skipped): points to 0, added to `settled_points`. Returns each player's points settled.
 */
export async function settleSparkPoints(tx: Queryable, appId: string, group: string, limit: number): Promise<{ playerId: string; points: number }[]> {
  const r = await tx.query<{ player_id: string; points: number }>(
    `WITH due AS (
       SELECT player_id, spark_points FROM banner_standings
        WHERE app_id = $1 AND pity_group = $2 AND spark_points > 0
        ORDER BY player_id LIMIT $3 FOR UPDATE SKIP LOCKED
     )
     UPDATE banner_standings s SET settled_points = s.settled_points + due.spark_points, settled_at = now(), spark_points = 0, updated_at = now()
       FROM due
      WHERE s.app_id = $1 AND s.pity_group = $2 AND s.player_id = due.player_id
      RETURNING s.player_id, due.spark_points AS points`,
    [appId, group, limit],
  );
  return r.rows.map((row) => ({ playerId: row.player_id, points: row.points }));
}

/**
 * What the app's kept openings of a banner recorded (through the index openings_chest_type, then
 * the banner): its pulls, players, first pull, guarantees used and ten-pull floor rerolls, the
 * items by rarity and collectible; its spark exchanges; and the spark points of its pity group
 * (carried across the group's banners: held and settled in the group).
 */
export async function readBannerPullStats(db: Queryable, appId: string, b: { id: string; chestTypeId: string; group: string }) {
  const params = [appId, b.chestTypeId, b.id];
  const ofBanner = `o.app_id = $1 AND o.chest_type_id = $2 AND o.banner->>'bannerId' = $3`;
  const [openings, items, exchanges, sparks] = await Promise.all([
    db.query<{ pulls: number; players: number; since: Date | null; guarantees: number; rerolls: number }>(
      `SELECT count(*)::int AS pulls, count(DISTINCT o.player_id)::int AS players, min(o.opened_at) AS since,
              count(*) FILTER (WHERE (o.banner->>'guaranteedBefore')::boolean AND (o.banner->>'featured')::boolean)::int AS guarantees,
              count(*) FILTER (WHERE (o.banner->>'floorRerolled')::boolean)::int AS rerolls
         FROM openings o WHERE ${ofBanner}`,
      params,
    ),
    db.query<{ rarity: string; collectible: string; n: number }>(
      `SELECT it->>'rarity' AS rarity, it->>'collectibleId' AS collectible, count(*)::int AS n
         FROM openings o CROSS JOIN LATERAL jsonb_array_elements(o.items) it
        WHERE ${ofBanner}
        GROUP BY 1, 2`,
      params,
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM spark_exchanges WHERE app_id = $1 AND banner = $2', [appId, b.id]),
    db.query<{ settled: number; settled_players: number; held: number }>(
      `SELECT coalesce(sum(settled_points), 0)::int AS settled,
              count(*) FILTER (WHERE settled_points > 0)::int AS settled_players,
              coalesce(sum(spark_points), 0)::int AS held
         FROM banner_standings WHERE app_id = $1 AND pity_group = $2`,
      [appId, b.group],
    ),
  ]);
  return { openings: openings.rows[0]!, items: items.rows, sparkExchanges: exchanges.rows[0]!.n, sparks: sparks.rows[0]! };
}

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

/** The standings a banner pull rolls from: the groups' flags and counters, the banners' spark points (absent: none yet). */
export async function readBannerStandings(
  db: Queryable,
  appId: string,
  playerId: string,
  groups: string[],
  banners: string[],
): Promise<{ groups: Map<string, { guaranteedFeatured: boolean; pity: number }>; sparkPoints: Map<string, number> }> {
  const [g, k] = await Promise.all([
    db.query<{ pity_group: string; guaranteed_featured: boolean; opens_since: number }>(
      'SELECT pity_group, guaranteed_featured, opens_since FROM banner_standings WHERE app_id = $1 AND player_id = $2 AND pity_group = ANY($3::text[])',
      [appId, playerId, groups],
    ),
    db.query<{ banner: string; points: number }>(
      'SELECT banner, points FROM banner_sparks WHERE app_id = $1 AND player_id = $2 AND banner = ANY($3::text[])',
      [appId, playerId, banners],
    ),
  ]);
  return {
    groups: new Map(g.rows.map((r) => [r.pity_group, { guaranteedFeatured: r.guaranteed_featured, pity: r.opens_since }])),
    sparkPoints: new Map(k.rows.map((r) => [r.banner, r.points])),
  };
}

/**
 * Writes what banner openings moved, in the openings' transaction (after their compare-and-set
 * succeeded): each group's flag and counter as rolled, and per banner the pulls and spark points
 * added (added, not set: a spark exchange may take points meanwhile).
 */
export async function recordBannerStandings(
  tx: Queryable,
  appId: string,
  playerId: string,
  moved: { group: string; guaranteedFeatured: boolean; pity: number; pulls: Map<string, number> }[],
): Promise<void> {
  const groups = moved.map((m) => ({ pity_group: m.group, guaranteed: m.guaranteedFeatured, pity: m.pity, pulls: [...m.pulls.values()].reduce((a, b) => a + b, 0) }));
  const banners = moved.flatMap((m) => [...m.pulls].map(([banner, pulls]) => ({ banner, pulls })));
  await tx.query(
    `WITH g AS (
       INSERT INTO banner_standings (app_id, player_id, pity_group, guaranteed_featured, opens_since, pulls)
       SELECT $1, $2, x.pity_group, x.guaranteed, x.pity, x.pulls
         FROM jsonb_to_recordset($3::jsonb) AS x(pity_group text, guaranteed boolean, pity integer, pulls integer)
       ON CONFLICT (app_id, player_id, pity_group) DO UPDATE SET
         guaranteed_featured = EXCLUDED.guaranteed_featured, opens_since = EXCLUDED.opens_since,
         pulls = banner_standings.pulls + EXCLUDED.pulls, updated_at = now()
     )
     INSERT INTO banner_sparks (app_id, player_id, banner, pulls, points)
     SELECT $1, $2, b.banner, b.pulls, b.pulls FROM jsonb_to_recordset($4::jsonb) AS b(banner text, pulls integer)
     ON CONFLICT (app_id, player_id, banner) DO UPDATE SET
       pulls = banner_sparks.pulls + EXCLUDED.pulls,
       -- A banner's chest opened after its points were settled adds none (they would never convert).
       points = CASE WHEN banner_sparks.settled_at IS NULL THEN banner_sparks.points + EXCLUDED.points ELSE banner_sparks.points END,
       updated_at = now()`,
    [appId, playerId, JSON.stringify(groups), JSON.stringify(banners)],
  );
}

/**
 * Takes `cost` spark points of the player's on a banner, only while at least that many are left
 * (one conditional UPDATE: of racing exchanges, only those the points cover succeed). Returns the
 * points after, or the points held when they were too few.
 */
export async function takeSparkPoints(
  tx: Queryable,
  appId: string,
  playerId: string,
  banner: string,
  cost: number,
): Promise<{ ok: true; points: number } | { ok: false; points: number }> {
  const r = await tx.query<{ points: number }>(
    `UPDATE banner_sparks SET points = points - $4, updated_at = now()
      WHERE app_id = $1 AND player_id = $2 AND banner = $3 AND points >= $4 AND settled_at IS NULL
      RETURNING points`,
    [appId, playerId, banner, cost],
  );
  if (r.rows[0]) return { ok: true, points: r.rows[0].points };
  const held = await tx.query<{ points: number }>('SELECT points FROM banner_sparks WHERE app_id = $1 AND player_id = $2 AND banner = $3', [
    appId,
    playerId,
    banner,
  ]);
  return { ok: false, points: held.rows[0]?.points ?? 0 };
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
  e: { id: string; appId: string; playerId: string; banner: string; collectibleId: string; cost: number; pointsAfter: number; idempotencyKey?: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO spark_exchanges (id, app_id, player_id, banner, collectible_id, cost, points_after, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [e.id, e.appId, e.playerId, e.banner, e.collectibleId, e.cost, e.pointsAfter, e.idempotencyKey ?? null],
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

/** The (app, banner) pairs that still have unsettled spark points (the partial index banner_sparks_unsettled). */
export async function endedSparkBanners(db: Queryable): Promise<{ appId: string; banner: string }[]> {
  const r = await db.query<{ app_id: string; banner: string }>(
    'SELECT DISTINCT app_id, banner FROM banner_sparks WHERE settled_at IS NULL AND points > 0',
  );
  return r.rows.map((row) => ({ appId: row.app_id, banner: row.banner }));
}

/**
 * Settles up to `limit` players' unsettled spark points on a banner (rows another transaction
 * holds are skipped): points to 0, kept as `settled_points`. Returns each player's points settled.
 */
export async function settleSparkPoints(tx: Queryable, appId: string, banner: string, limit: number): Promise<{ playerId: string; points: number }[]> {
  const r = await tx.query<{ player_id: string; settled_points: number }>(
    `UPDATE banner_sparks k SET settled_at = now(), settled_points = k.points, points = 0, updated_at = now()
       FROM (SELECT player_id FROM banner_sparks
              WHERE app_id = $1 AND banner = $2 AND settled_at IS NULL AND points > 0
              ORDER BY player_id LIMIT $3 FOR UPDATE SKIP LOCKED) due
      WHERE k.app_id = $1 AND k.banner = $2 AND k.player_id = due.player_id AND k.settled_at IS NULL
      RETURNING k.player_id, k.settled_points`,
    [appId, banner, limit],
  );
  return r.rows.map((row) => ({ playerId: row.player_id, points: row.settled_points }));
}

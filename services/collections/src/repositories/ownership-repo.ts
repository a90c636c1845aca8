import type { Queryable } from '@ccs/shared';

/** One granted item of a chest opening. */
export interface GrantedItem {
  slot: number;
  collectibleId: string;
  collectionId: string;
  rarity: string;
}

/**
 * Adds the items of one opening to the player's collection. Each (opening, slot) is inserted at
 * most once, so a re-delivered grant adds nothing; returns how many rows were added.
 */
export async function insertGrantedItems(
  tx: Queryable,
  grant: { openingId: string; appId: string; playerId: string; openedAt: string; items: GrantedItem[] },
): Promise<number> {
  const r = await tx.query(
    `INSERT INTO owned_collectibles (opening_id, slot, app_id, player_id, collectible_id, collection_id, rarity, acquired_at)
     SELECT $1, g.slot, $2, $3, g."collectibleId", g."collectionId", g.rarity, $4::timestamptz
       FROM jsonb_to_recordset($5::jsonb) AS g(slot integer, "collectibleId" text, "collectionId" text, rarity text)
     ON CONFLICT (opening_id, slot) DO NOTHING`,
    [grant.openingId, grant.appId, grant.playerId, grant.openedAt, JSON.stringify(grant.items)],
  );
  return r.rowCount ?? 0;
}

/**
 * How many distinct current items of each collection the player owns (collections with none are
 * absent). Membership is the current content's, so a count never exceeds a collection's size.
 */
export async function uniqueOwnedByCollection(q: Queryable, appId: string, playerId: string, collectionId?: string): Promise<Map<string, number>> {
  const r = await q.query<{ collection_id: string; n: number }>(
    `SELECT i.collection_id, count(DISTINCT o.collectible_id)::int AS n
       FROM owned_collectibles o
       JOIN collectibles i ON i.app_id = o.app_id AND i.id = o.collectible_id AND i.retired_at IS NULL
      WHERE o.app_id = $1 AND o.player_id = $2 AND ($3::text IS NULL OR i.collection_id = $3)
      GROUP BY i.collection_id`,
    [appId, playerId, collectionId ?? null],
  );
  return new Map(r.rows.map((row) => [row.collection_id, row.n]));
}

/** Copies of one collectible the player owns and when the first arrived. */
export async function ownershipOf(q: Queryable, appId: string, playerId: string, collectibleId: string) {
  const r = await q.query<{ n: number; first: Date | null }>(
    `SELECT count(*)::int AS n, min(acquired_at) AS first FROM owned_collectibles
      WHERE app_id = $1 AND player_id = $2 AND collectible_id = $3`,
    [appId, playerId, collectibleId],
  );
  const row = r.rows[0]!;
  return { count: row.n, firstAcquiredAt: row.first ? row.first.toISOString() : null };
}

/** One owned collectible id of a player, with its copies and first and last acquisition. */
export interface OwnedRow {
  collectibleId: string;
  count: number;
  firstAcquiredAt: string;
  lastAcquiredAt: string;
}

/**
 * A page of the distinct current collectibles the player owns, most recently acquired first;
 * `total` distinct items and `copies` in all.
 */
export async function ownedPage(q: Queryable, appId: string, playerId: string, page: { limit: number; offset: number }) {
  const owned = `FROM owned_collectibles o
       JOIN collectibles i ON i.app_id = o.app_id AND i.id = o.collectible_id AND i.retired_at IS NULL
      WHERE o.app_id = $1 AND o.player_id = $2`;
  const [totals, rows] = await Promise.all([
    q.query<{ total: number; copies: number }>(
      `SELECT count(DISTINCT o.collectible_id)::int AS total, count(*)::int AS copies ${owned}`,
      [appId, playerId],
    ),
    q.query<{ collectible_id: string; n: number; first: Date; last: Date }>(
      `SELECT o.collectible_id, count(*)::int AS n, min(o.acquired_at) AS first, max(o.acquired_at) AS last ${owned}
        GROUP BY o.collectible_id ORDER BY max(o.acquired_at) DESC, o.collectible_id LIMIT $3 OFFSET $4`,
      [appId, playerId, page.limit, page.offset],
    ),
  ]);
  const items: OwnedRow[] = rows.rows.map((r) => ({
    collectibleId: r.collectible_id,
    count: r.n,
    firstAcquiredAt: r.first.toISOString(),
    lastAcquiredAt: r.last.toISOString(),
  }));
  return { total: totals.rows[0]!.total, copies: totals.rows[0]!.copies, items };
}

import { preparedStatement, type OutboxMessage, type Queryable } from '@ccs/shared';

/** One granted item of a chest opening. */
export interface GrantedItem {
  slot: number;
  collectibleId: string;
  collectionId: string;
  rarity: string;
  /** Set when the item was judged a duplicate past max_copies: what it became instead of a copy. */
  converted?: { currency: string; amount: number } | null;
}

/** One opening's grant as the collections service applies it. */
export interface Grant {
  openingId: string;
  appId: string;
  playerId: string;
  openedAt: string;
  items: GrantedItem[];
}

/** A durable message written with an opening's items, only if they are (the credit of its conversions). */
export interface GrantMessage {
  openingId: string;
  message: OutboxMessage;
}

/** The one statement of insertGrantedItemsBatch: items, tallies, the messages' outbox rows and the completion candidates. */
const GRANT_ITEMS = preparedStatement(
  'collections_grant_items',
  `WITH items AS (
   SELECT * FROM jsonb_to_recordset($1::jsonb)
     AS g(o uuid, s integer, a uuid, p uuid, c text, k text, r text, t timestamptz, cc text, ca integer)
 ), inserted AS (
   INSERT INTO owned_collectibles (opening_id, slot, app_id, player_id, collectible_id, collection_id, rarity, acquired_at,
                                   converted_currency, converted_amount)
   SELECT o, s, a, p, c, k, r, t, cc, ca FROM items
   ON CONFLICT (opening_id, slot) DO NOTHING
   RETURNING opening_id, app_id, player_id, collectible_id, collection_id, acquired_at, converted_currency
 ), tallied AS (
   INSERT INTO player_collectibles AS pc (app_id, player_id, collectible_id, copies, first_acquired_at, last_acquired_at)
   SELECT app_id, player_id, collectible_id, count(*), min(acquired_at), max(acquired_at)
     FROM inserted WHERE converted_currency IS NULL
    GROUP BY app_id, player_id, collectible_id ORDER BY app_id, player_id, collectible_id
   ON CONFLICT (app_id, player_id, collectible_id) DO UPDATE SET
     copies = pc.copies + EXCLUDED.copies,
     first_acquired_at = LEAST(pc.first_acquired_at, EXCLUDED.first_acquired_at),
     last_acquired_at = GREATEST(pc.last_acquired_at, EXCLUDED.last_acquired_at)
   -- xmax 0: the row was inserted (the player's first copy), not updated.
   RETURNING app_id, player_id, collectible_id, xmax = 0 AS first_copy
 ), written AS (
   INSERT INTO outbox (id, subject, payload, headers)
   SELECT m.id, m.subject, m.payload, m.headers
     FROM jsonb_to_recordset($2::jsonb) AS m(o uuid, id uuid, subject text, payload jsonb, headers jsonb)
    WHERE m.o IN (SELECT opening_id FROM inserted)
   ON CONFLICT (id) DO NOTHING
   RETURNING id
 ), kept AS (
   SELECT DISTINCT i.app_id, i.player_id, i.collection_id FROM inserted i WHERE i.converted_currency IS NULL
 ), candidates AS (
   SELECT k.app_id, k.player_id, k.collection_id FROM kept k
    WHERE NOT EXISTS (SELECT 1 FROM collection_completions d
                       WHERE d.app_id = k.app_id AND d.player_id = k.player_id AND d.collection_id = k.collection_id)
      AND (EXISTS (SELECT 1 FROM tallied t JOIN inserted i USING (app_id, player_id, collectible_id)
                    WHERE t.first_copy AND t.app_id = k.app_id AND t.player_id = k.player_id AND i.collection_id = k.collection_id)
           OR NOT EXISTS (
             SELECT 1 FROM collectibles x
              WHERE x.app_id = k.app_id AND x.collection_id = k.collection_id AND x.retired_at IS NULL
                AND NOT EXISTS (SELECT 1 FROM player_collectibles h
                                 WHERE h.app_id = x.app_id AND h.player_id = k.player_id AND h.collectible_id = x.id)))
 )
 SELECT ARRAY(SELECT DISTINCT opening_id::text FROM inserted) AS applied, ARRAY(SELECT id::text FROM written) AS written,
        (SELECT coalesce(jsonb_agg(jsonb_build_array(app_id, player_id, collection_id)), '[]'::jsonb) FROM candidates) AS candidates`,
);

/**
 * Adds the items of many openings to the players' collections in ONE statement (atomic on its
 * own): each (opening, slot) is inserted at most once, so a re-delivered grant adds nothing.
 * Converted items are stored with what they became and are not copies: only the kept items
 * actually inserted are added to the per-player tallies (in key order, so concurrent batches lock
 * rows in the same order). `messages` go to the outbox with their opening's items, and only if
 * those were inserted. Returns the openings that added items, the ids of the messages written, and
 * the completion candidates: the (app, player, collection) keys (`candidateKey`) of kept items
 * whose collection the player has not completed and could have completed now. A collection is
 * completed by a first copy of one of its collectibles (a tally row this statement inserted; a
 * concurrent batch's first copy is seen by that batch's own check, run after its commit), or
 * without one when content changed what the collection holds (the player, as this statement sees
 * it, now holds every current collectible of it). Any other kept copy cannot complete anything,
 * so its collection is not checked again (docs/content.md, "Collection rewards").
 */
export async function insertGrantedItemsBatch(
  db: Queryable,
  grants: Grant[],
  messages: GrantMessage[] = [],
): Promise<{ applied: Set<string>; written: Set<string>; candidates: Set<string> }> {
  const rows = grants.flatMap((g) =>
    g.items.map((it) => ({
      o: g.openingId,
      s: it.slot,
      a: g.appId,
      p: g.playerId,
      c: it.collectibleId,
      k: it.collectionId,
      r: it.rarity,
      t: g.openedAt,
      cc: it.converted?.currency ?? null,
      ca: it.converted?.amount ?? null,
    })),
  );
  if (rows.length === 0) return { applied: new Set(), written: new Set(), candidates: new Set() };
  const outbox = messages.map(({ openingId, message: m }) => ({
    o: openingId,
    id: m.id,
    subject: m.subject,
    payload: m.payload,
    headers: m.headers,
  }));
  const r = await db.query<{ applied: string[]; written: string[]; candidates: [string, string, string][] }>(
    GRANT_ITEMS.with([JSON.stringify(rows), JSON.stringify(outbox)]),
  );
  const row = r.rows[0]!;
  return {
    applied: new Set(row.applied),
    written: new Set(row.written),
    candidates: new Set(row.candidates.map(([a, p, c]) => candidateKey(a, p, c))),
  };
}

/** The key of a completion candidate (ids of apps and players in lower case, as Postgres prints them). */
export const candidateKey = (appId: string, playerId: string, collectionId: string): string =>
  `${appId.toLowerCase()}:${playerId.toLowerCase()}:${collectionId}`;

/**
 * How many distinct current items of each collection the player owns (collections with none are
 * absent). Membership is the current content's, so a count never exceeds a collection's size.
 */
export async function uniqueOwnedByCollection(q: Queryable, appId: string, playerId: string, collectionId?: string): Promise<Map<string, number>> {
  const r = await q.query<{ collection_id: string; n: number }>(
    `SELECT i.collection_id, count(*)::int AS n
       FROM player_collectibles o
       JOIN collectibles i ON i.app_id = o.app_id AND i.id = o.collectible_id AND i.retired_at IS NULL
      WHERE o.app_id = $1 AND o.player_id = $2 AND ($3::text IS NULL OR i.collection_id = $3)
      GROUP BY i.collection_id`,
    [appId, playerId, collectionId ?? null],
  );
  return new Map(r.rows.map((row) => [row.collection_id, row.n]));
}

const OWNERSHIP_IN_COLLECTION = preparedStatement(
  'collections_ownership_in_collection',
  `SELECT own.copies AS n, own.first_acquired_at AS first,
            (SELECT count(*)::int FROM player_collectibles o
               JOIN collectibles i ON i.app_id = o.app_id AND i.id = o.collectible_id AND i.retired_at IS NULL
              WHERE o.app_id = $1 AND o.player_id = $2 AND i.collection_id = $4) AS unique
       FROM (SELECT 1) one
       LEFT JOIN player_collectibles own ON own.app_id = $1 AND own.player_id = $2 AND own.collectible_id = $3`,
);

/**
 * In one query: the copies of one collectible the player owns and when the first arrived, and how
 * many distinct current items of its collection the player owns.
 */
export async function ownershipInCollection(q: Queryable, appId: string, playerId: string, collectibleId: string, collectionId: string) {
  const r = await q.query<{ n: number | null; first: Date | null; unique: number }>(
    OWNERSHIP_IN_COLLECTION.with([appId, playerId, collectibleId, collectionId]),
  );
  const row = r.rows[0]!;
  return { count: row.n ?? 0, firstAcquiredAt: row.first ? row.first.toISOString() : null, uniqueInCollection: row.unique };
}

/** One owned collectible id of a player, with its copies and first and last acquisition. */
export interface OwnedRow {
  collectibleId: string;
  count: number;
  firstAcquiredAt: string;
  lastAcquiredAt: string;
}

/**
 * A page of the distinct current collectibles the player owns, most recently acquired first; the
 * totals (distinct items and copies) come with the per-collection counts (`ownedByCollection`).
 */
export async function ownedPage(q: Queryable, appId: string, playerId: string, page: { limit: number; offset: number }): Promise<OwnedRow[]> {
  const rows = await q.query<{ collectible_id: string; n: number; first: Date; last: Date }>(
    `SELECT o.collectible_id, o.copies AS n, o.first_acquired_at AS first, o.last_acquired_at AS last
       FROM player_collectibles o
       JOIN collectibles i ON i.app_id = o.app_id AND i.id = o.collectible_id AND i.retired_at IS NULL
      WHERE o.app_id = $1 AND o.player_id = $2
      ORDER BY o.last_acquired_at DESC, o.collectible_id LIMIT $3 OFFSET $4`,
    [appId, playerId, page.limit, page.offset],
  );
  return rows.rows.map((r) => ({
    collectibleId: r.collectible_id,
    count: r.n,
    firstAcquiredAt: r.first.toISOString(),
    lastAcquiredAt: r.last.toISOString(),
  }));
}

/** Per collection: the distinct current items and the copies the player owns (collections with none are absent). */
export async function ownedByCollection(q: Queryable, appId: string, playerId: string): Promise<Map<string, { unique: number; copies: number }>> {
  const r = await q.query<{ collection_id: string; n: number; copies: number }>(
    `SELECT i.collection_id, count(*)::int AS n, sum(o.copies)::int AS copies
       FROM player_collectibles o
       JOIN collectibles i ON i.app_id = o.app_id AND i.id = o.collectible_id AND i.retired_at IS NULL
      WHERE o.app_id = $1 AND o.player_id = $2
      GROUP BY i.collection_id`,
    [appId, playerId],
  );
  return new Map(r.rows.map((row) => [row.collection_id, { unique: row.n, copies: row.copies }]));
}

import { z } from 'zod';
import { OpenedItemSchema, OUTBOX_COLUMNS, outboxParams, type OpeningView, type OutboxMessage, type Queryable } from '@ccs/shared';

interface OpeningRow {
  id: string;
  chest_id: string;
  chest_type_id: string;
  opened_at: Date;
  items: unknown;
  experience: number;
  content_version: number;
}

const ItemsSchema = z.array(OpenedItemSchema);
const COLUMNS = 'id, chest_id, chest_type_id, opened_at, items, experience, content_version';

const toView = (r: OpeningRow): OpeningView => ({
  openingId: r.id,
  chestId: r.chest_id,
  chestTypeId: r.chest_type_id,
  openedAt: r.opened_at.toISOString(),
  items: ItemsSchema.parse(r.items),
  experience: r.experience,
  rulesVersion: r.content_version,
});

/**
 * Step 1 of the opening saga as ONE atomic statement: consumes the chest if it is still unopened
 * (the conditional UPDATE takes its row lock; a concurrent opening waits for it, then finds the
 * chest opened and changes nothing), records the opening and writes its grant message to the
 * outbox. Returns false when the chest was no longer unopened (nothing written).
 */
export async function recordOpening(
  db: Queryable,
  o: OpeningView & { appId: string; playerId: string; idempotencyKey?: string },
  grant: OutboxMessage,
): Promise<boolean> {
  const r = await db.query<{ n: number }>(
    `WITH consumed AS (
       UPDATE inventory_chests SET opened_at = $7
        WHERE app_id = $2 AND id = $4 AND player_id = $3 AND opened_at IS NULL
        RETURNING id
     ), recorded AS (
       INSERT INTO openings (id, app_id, player_id, chest_id, chest_type_id, content_version, opened_at, items, experience, idempotency_key)
       SELECT $1, $2, $3, id, $5, $6, $7, $8, $9, $10 FROM consumed
       RETURNING id
     ), announced AS (
       INSERT INTO outbox (${OUTBOX_COLUMNS}) SELECT $11, $12, $13, $14 FROM recorded
       RETURNING id
     )
     SELECT count(*)::int AS n FROM announced`,
    [
      o.openingId, o.appId, o.playerId, o.chestId, o.chestTypeId, o.rulesVersion, o.openedAt, JSON.stringify(o.items), o.experience, o.idempotencyKey ?? null,
      ...outboxParams(grant),
    ],
  );
  return r.rows[0]!.n === 1;
}

/** The opening a player made with an Idempotency-Key, if any. */
export async function findOpeningByKey(db: Queryable, appId: string, playerId: string, key: string): Promise<OpeningView | undefined> {
  const r = await db.query<OpeningRow>(
    `SELECT ${COLUMNS} FROM openings WHERE app_id = $1 AND player_id = $2 AND idempotency_key = $3`,
    [appId, playerId, key],
  );
  return r.rows[0] && toView(r.rows[0]);
}

/** One page of a player's openings, newest first, and their total. */
export async function listOpenings(
  db: Queryable,
  appId: string,
  playerId: string,
  page: { limit: number; offset: number },
): Promise<{ openings: OpeningView[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.query<OpeningRow>(
      `SELECT ${COLUMNS} FROM openings WHERE app_id = $1 AND player_id = $2
       ORDER BY opened_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [appId, playerId, page.limit, page.offset],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM openings WHERE app_id = $1 AND player_id = $2', [appId, playerId]),
  ]);
  return { openings: rows.rows.map(toView), total: count.rows[0]!.n };
}

import { z } from 'zod';
import { OpenedItemSchema, type OpeningView, type Queryable } from '@ccs/shared';

interface OpeningRow {
  id: string;
  chest_id: string;
  chest_type_id: string;
  opened_at: Date;
  items: unknown;
  experience: number;
  content_version: number;
}

const COLUMNS = 'id, chest_id, chest_type_id, opened_at, items, experience, content_version';

const toView = (r: OpeningRow): OpeningView => ({
  openingId: r.id,
  chestId: r.chest_id,
  chestTypeId: r.chest_type_id,
  openedAt: r.opened_at.toISOString(),
  items: z.array(OpenedItemSchema).parse(r.items),
  experience: r.experience,
  rulesVersion: r.content_version,
});

/** Records an opening (in the transaction that consumes the chest). */
export async function insertOpening(
  tx: Queryable,
  o: OpeningView & { appId: string; playerId: string; idempotencyKey?: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO openings (id, app_id, player_id, chest_id, chest_type_id, content_version, opened_at, items, experience, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [o.openingId, o.appId, o.playerId, o.chestId, o.chestTypeId, o.rulesVersion, o.openedAt, JSON.stringify(o.items), o.experience, o.idempotencyKey ?? null],
  );
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

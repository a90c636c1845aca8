import { z } from 'zod';
import { ChestSourceSchema, type MailboxItemView, type Queryable } from '@ccs/shared';

/** docs/content.md, "Overflow mailbox": the chests a full inventory could not take. */

type Source = MailboxItemView['source'];

/** A granted chest put in the mailbox. */
export interface NewMailboxItem {
  id: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  source: Source;
  ttlDays: number;
}

/**
 * The ids of `ids` granted already, into the inventory or the mailbox (opened, claimed or not),
 * lower-cased: a grant delivered again must add its chest nowhere.
 */
export async function grantedChestIds(db: Queryable, ids: string[]): Promise<Set<string>> {
  const r = await db.query<{ id: string }>(
    'SELECT id FROM inventory_chests WHERE id = ANY($1::uuid[]) UNION ALL SELECT id FROM mailbox_items WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return new Set(r.rows.map((row) => row.id.toLowerCase()));
}

/** Puts granted chests in the mailbox in one statement, each expiring `ttlDays` from now; an item of an id already there changes nothing. */
export async function insertMailboxItems(tx: Queryable, items: NewMailboxItem[]): Promise<void> {
  if (items.length === 0) return;
  await tx.query(
    `INSERT INTO mailbox_items (id, app_id, player_id, chest_type_id, source, expires_at)
     SELECT id, app_id, player_id, chest_type_id, source, now() + make_interval(days => ttl)
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::int[]) AS t(id, app_id, player_id, chest_type_id, source, ttl)
     ON CONFLICT (id) DO NOTHING`,
    [
      items.map((c) => c.id),
      items.map((c) => c.appId),
      items.map((c) => c.playerId),
      items.map((c) => c.chestTypeId),
      items.map((c) => c.source),
      items.map((c) => c.ttlDays),
    ],
  );
}

interface ItemRow {
  id: string;
  chest_type_id: string;
  name: string;
  description: string;
  images: unknown;
  source: string;
  received_at: Date;
  expires_at: Date;
}

const ImagesSchema = z.array(z.string());

const toView = (r: ItemRow): MailboxItemView => ({
  id: r.id,
  chestTypeId: r.chest_type_id,
  name: r.name,
  description: r.description,
  images: ImagesSchema.parse(r.images),
  source: ChestSourceSchema.parse(r.source),
  receivedAt: r.received_at.toISOString(),
  expiresAt: r.expires_at.toISOString(),
});

// Waiting = neither claimed nor expired; `now()` is the statement's transaction time.
const WAITING = 'm.app_id = $1 AND m.player_id = $2 AND m.claimed_at IS NULL AND m.expires_at > now()';

/** One page of a player's waiting items, soonest to expire first. */
export async function listWaiting(
  db: Queryable,
  appId: string,
  playerId: string,
  page: { limit: number; offset: number },
): Promise<MailboxItemView[]> {
  const r = await db.query<ItemRow>(
    `SELECT m.id, m.chest_type_id, t.name, t.description, t.images, m.source, m.received_at, m.expires_at
       FROM mailbox_items m JOIN chest_types t ON t.app_id = m.app_id AND t.id = m.chest_type_id
      WHERE ${WAITING} ORDER BY m.expires_at, m.id LIMIT $3 OFFSET $4`,
    [appId, playerId, page.limit, page.offset],
  );
  return r.rows.map(toView);
}

/** How many items wait in a player's mailbox. */
export async function countWaiting(db: Queryable, appId: string, playerId: string): Promise<number> {
  const r = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM mailbox_items m WHERE ${WAITING}`, [appId, playerId]);
  return r.rows[0]!.n;
}

/** A mailbox item as a claim sees it, locked until the transaction ends. */
export interface ItemToClaim {
  id: string;
  chestTypeId: string;
  source: Source;
  claimed: boolean;
  expired: boolean;
}

/** The player's item of that id, locked (undefined when it is not theirs or unknown). */
export async function lockItem(tx: Queryable, appId: string, playerId: string, id: string): Promise<ItemToClaim | undefined> {
  const r = await tx.query<{ id: string; chest_type_id: string; source: string; claimed: boolean; expired: boolean }>(
    `SELECT id, chest_type_id, source, claimed_at IS NOT NULL AS claimed, expires_at <= now() AS expired
       FROM mailbox_items WHERE app_id = $1 AND player_id = $2 AND id = $3 FOR UPDATE`,
    [appId, playerId, id],
  );
  const row = r.rows[0];
  return (
    row && { id: row.id, chestTypeId: row.chest_type_id, source: ChestSourceSchema.parse(row.source), claimed: row.claimed, expired: row.expired }
  );
}

/** Marks an item claimed (its chest is now in the inventory under the same id). */
export async function markClaimed(tx: Queryable, id: string): Promise<void> {
  await tx.query('UPDATE mailbox_items SET claimed_at = now() WHERE id = $1', [id]);
}

/**
 * Deletes items whose expiry is more than `graceDays` past (claimed ones too: their chest is in the
 * inventory under the same id, which keeps re-delivered grants out), a batch per statement.
 */
export async function deleteExpiredItems(db: Queryable, graceDays: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await db.query(
      `DELETE FROM mailbox_items WHERE id IN (
         SELECT id FROM mailbox_items WHERE expires_at < now() - make_interval(days => $1) LIMIT $2)`,
      [graceDays, batch],
    );
    total += r.rowCount ?? 0;
    if ((r.rowCount ?? 0) < batch) return total;
  }
}

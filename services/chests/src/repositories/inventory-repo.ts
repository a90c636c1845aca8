import { z } from 'zod';
import type { InventoryChestView, Queryable } from '@ccs/shared';

type Source = InventoryChestView['source'];
const SourceSchema = z.enum(['purchased', 'earned', 'welcome', 'special']);

/** A new chest in a player's inventory. */
export interface NewChest {
  id: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  source: Source;
  purchaseId?: string;
}

/** Adds a chest; a chest with that id already there (a re-delivered grant) changes nothing. */
export async function insertChest(db: Queryable, c: NewChest): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO inventory_chests (id, app_id, player_id, chest_type_id, source, purchase_id)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
    [c.id, c.appId, c.playerId, c.chestTypeId, c.source, c.purchaseId ?? null],
  );
  return r.rowCount === 1;
}

interface ChestRow {
  id: string;
  chest_type_id: string;
  name: string;
  description: string;
  images: unknown;
  price: unknown;
  source: string;
  acquired_at: Date;
}

/** An unopened chest with its type's presentation and price. */
export interface OwnedChest extends InventoryChestView {
  price: Record<string, number>;
}

const toOwned = (r: ChestRow): OwnedChest => ({
  id: r.id,
  chestTypeId: r.chest_type_id,
  name: r.name,
  description: r.description,
  images: z.array(z.string()).parse(r.images),
  source: SourceSchema.parse(r.source),
  acquiredAt: r.acquired_at.toISOString(),
  price: z.record(z.string(), z.number().int()).parse(r.price),
});

const OWNED_SELECT = `SELECT c.id, c.chest_type_id, t.name, t.description, t.images, t.price, c.source, c.acquired_at
  FROM inventory_chests c JOIN chest_types t ON t.app_id = c.app_id AND t.id = c.chest_type_id`;

/** A player's unopened chests, oldest first. */
export async function listUnopened(db: Queryable, appId: string, playerId: string): Promise<OwnedChest[]> {
  const r = await db.query<ChestRow>(
    `${OWNED_SELECT} WHERE c.app_id = $1 AND c.player_id = $2 AND c.opened_at IS NULL ORDER BY c.acquired_at, c.id`,
    [appId, playerId],
  );
  return r.rows.map(toOwned);
}

/** Chests by id (for a purchase's answer), in the order given. */
export async function findChests(db: Queryable, appId: string, ids: string[]): Promise<OwnedChest[]> {
  const r = await db.query<ChestRow>(`${OWNED_SELECT} WHERE c.app_id = $1 AND c.id = ANY($2::uuid[])`, [appId, ids]);
  const byId = new Map(r.rows.map((row) => [row.id, toOwned(row)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** How many unopened chests a player holds, per source. */
export async function countUnopenedBySource(db: Queryable, appId: string, playerId: string): Promise<Record<Source, number>> {
  const r = await db.query<{ source: string; n: number }>(
    `SELECT source, count(*)::int AS n FROM inventory_chests
     WHERE app_id = $1 AND player_id = $2 AND opened_at IS NULL GROUP BY source`,
    [appId, playerId],
  );
  const out: Record<Source, number> = { purchased: 0, earned: 0, welcome: 0, special: 0 };
  for (const row of r.rows) out[SourceSchema.parse(row.source)] = row.n;
  return out;
}

/** How many unopened chests a player holds. */
export async function countUnopened(db: Queryable, appId: string, playerId: string): Promise<number> {
  const r = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM inventory_chests WHERE app_id = $1 AND player_id = $2 AND opened_at IS NULL',
    [appId, playerId],
  );
  return r.rows[0]!.n;
}

/** The lock of one chest for opening: its owner, type and whether it is opened. */
export interface LockedChest {
  id: string;
  playerId: string;
  chestTypeId: string;
  opened: boolean;
}

/** Locks a chest of the app (`SELECT … FOR UPDATE`) until the transaction ends. */
export async function lockChest(tx: Queryable, appId: string, chestId: string): Promise<LockedChest | undefined> {
  const r = await tx.query<{ id: string; player_id: string; chest_type_id: string; opened: boolean }>(
    `SELECT id, player_id, chest_type_id, opened_at IS NOT NULL AS opened
     FROM inventory_chests WHERE app_id = $1 AND id = $2 FOR UPDATE`,
    [appId, chestId],
  );
  const row = r.rows[0];
  return row && { id: row.id, playerId: row.player_id, chestTypeId: row.chest_type_id, opened: row.opened };
}

/** Marks a locked chest opened (consumed). */
export async function markOpened(tx: Queryable, appId: string, chestId: string, openedAt: Date): Promise<void> {
  await tx.query('UPDATE inventory_chests SET opened_at = $3 WHERE app_id = $1 AND id = $2 AND opened_at IS NULL', [appId, chestId, openedAt]);
}

/**
 * Serialises inventory changes of one player until the transaction ends (purchases re-check the
 * capacity under it, so concurrent purchases cannot overfill an inventory).
 */
export async function lockPlayerInventory(tx: Queryable, appId: string, playerId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('chests-inventory:' || $1 || ':' || $2, 0))", [appId, playerId]);
}

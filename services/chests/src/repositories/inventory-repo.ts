import { z } from 'zod';
import { preparedStatement, type InventoryChestView, type Queryable } from '@ccs/shared';

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

/** Adds purchased chests of one type in one statement; returns their ids and acquisition time, in order. */
export async function insertPurchasedChests(
  tx: Queryable,
  c: { ids: string[]; appId: string; playerId: string; chestTypeId: string; purchaseId: string; banner?: string },
): Promise<{ id: string; acquiredAt: string }[]> {
  const r = await tx.query<{ id: string; acquired_at: Date }>(
    `INSERT INTO inventory_chests (id, app_id, player_id, chest_type_id, source, purchase_id, banner)
     SELECT id, $2, $3, $4, 'purchased', $5, $6 FROM unnest($1::uuid[]) AS id
     RETURNING id, acquired_at`,
    [c.ids, c.appId, c.playerId, c.chestTypeId, c.purchaseId, c.banner ?? null],
  );
  const at = new Map(r.rows.map((row) => [row.id, row.acquired_at.toISOString()]));
  return c.ids.map((id) => ({ id, acquiredAt: at.get(id)! }));
}

/** Adds granted chests in one statement; a chest whose id is already there (a re-delivered grant) changes nothing. */
export async function insertGrantedChests(tx: Queryable, chests: Omit<NewChest, 'purchaseId'>[]): Promise<void> {
  if (chests.length === 0) return;
  await tx.query(
    `INSERT INTO inventory_chests (id, app_id, player_id, chest_type_id, source)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[]) ON CONFLICT (id) DO NOTHING`,
    [
      chests.map((c) => c.id),
      chests.map((c) => c.appId),
      chests.map((c) => c.playerId),
      chests.map((c) => c.chestTypeId),
      chests.map((c) => c.source),
    ],
  );
}

/** Adds a chest; a chest with that id already there (a claimed mailbox item claimed again) changes nothing. */
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
  source: string;
  acquired_at: Date;
  /** For a time-locked type: locked, unlocking or unlocked (by the database's clock); null otherwise. */
  lock_state: 'locked' | 'unlocking' | 'unlocked' | null;
  unlocks_at: Date | null;
}

// Built once: the jsonb columns were validated when their content was loaded, this only guards
// their shape (a schema built per row was a third of the inventory's CPU).
const ImagesSchema = z.array(z.string());
const PriceSchema = z.record(z.string(), z.number().int());

const toOwned = (r: ChestRow): InventoryChestView => ({
  id: r.id,
  chestTypeId: r.chest_type_id,
  name: r.name,
  description: r.description,
  images: ImagesSchema.parse(r.images),
  source: SourceSchema.parse(r.source),
  acquiredAt: r.acquired_at.toISOString(),
  ...(r.lock_state ? { lock: { state: r.lock_state, unlocksAt: r.unlocks_at ? r.unlocks_at.toISOString() : null } } : {}),
});

const OWNED_SELECT = `SELECT c.id, c.chest_type_id, t.name, t.description, t.images, c.source, c.acquired_at, c.unlocks_at,
       CASE WHEN t.unlock IS NULL THEN NULL WHEN c.unlocks_at IS NULL THEN 'locked' WHEN c.unlocks_at > now() THEN 'unlocking' ELSE 'unlocked' END AS lock_state
  FROM inventory_chests c JOIN chest_types t ON t.app_id = c.app_id AND t.id = c.chest_type_id`;

/** Which unopened chests of a player to list. */
export interface InventoryPage {
  limit: number;
  offset: number;
  /** By acquisition time, then id. */
  order: 'asc' | 'desc';
  chestTypeId?: string;
}

/**
 * The page statement in its four forms, each named (prepared once per connection, its generic plan
 * cached): by ascending or descending acquisition, and with or without a chest type. Separate
 * texts rather than `($3 IS NULL OR …)`, which a generic plan could not drop.
 */
const LIST_UNOPENED = Object.fromEntries(
  (['asc', 'desc'] as const).flatMap((order) =>
    [false, true].map((typed) => {
      const dir = order === 'desc' ? 'DESC' : 'ASC';
      const text = `${OWNED_SELECT} WHERE c.app_id = $1 AND c.player_id = $2 AND c.opened_at IS NULL${typed ? ' AND c.chest_type_id = $5' : ''}
     ORDER BY c.acquired_at ${dir}, c.id ${dir} LIMIT $3 OFFSET $4`;
      return [`${order}${typed ? '_typed' : ''}`, preparedStatement(`chests_list_unopened_${order}${typed ? '_typed' : ''}`, text)];
    }),
  ),
);

/** One page of a player's unopened chests (an index range scan, whatever the inventory's size). */
export async function listUnopened(db: Queryable, appId: string, playerId: string, page: InventoryPage): Promise<InventoryChestView[]> {
  const values: unknown[] = [appId, playerId, page.limit, page.offset];
  if (page.chestTypeId) values.push(page.chestTypeId);
  const r = await db.query<ChestRow>(LIST_UNOPENED[`${page.order}${page.chestTypeId ? '_typed' : ''}`]!.with(values));
  return r.rows.map(toOwned);
}

/** One unopened chest of a player, as the inventory lists it (a chest just claimed from the mailbox). */
export async function findUnopened(db: Queryable, appId: string, playerId: string, chestId: string): Promise<InventoryChestView | undefined> {
  const r = await db.query<ChestRow>(`${OWNED_SELECT} WHERE c.app_id = $1 AND c.player_id = $2 AND c.id = $3 AND c.opened_at IS NULL`, [
    appId,
    playerId,
    chestId,
  ]);
  return r.rows[0] && toOwned(r.rows[0]);
}

/** Unopened chests of a player counted per source and chest type, with the type's price. */
export interface InventoryGroup {
  source: Source;
  chestTypeId: string;
  count: number;
  price: Record<string, number>;
}

const SUMMARIZE_UNOPENED = preparedStatement(
  'chests_summarize_unopened',
  `SELECT g.source, g.chest_type_id, g.n, t.price
       FROM (SELECT source, chest_type_id, count(*)::int AS n FROM inventory_chests
              WHERE app_id = $1 AND player_id = $2 AND opened_at IS NULL GROUP BY source, chest_type_id) g
       JOIN chest_types t ON t.app_id = $1 AND t.id = g.chest_type_id`,
);

/** The whole inventory in a few grouped rows (its counts and value, without listing it). */
export async function summarizeUnopened(db: Queryable, appId: string, playerId: string): Promise<InventoryGroup[]> {
  const r = await db.query<{ source: string; chest_type_id: string; n: number; price: unknown }>(SUMMARIZE_UNOPENED.with([appId, playerId]));
  return r.rows.map((row) => ({
    source: SourceSchema.parse(row.source),
    chestTypeId: row.chest_type_id,
    count: row.n,
    price: PriceSchema.parse(row.price),
  }));
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

/**
 * Serialises inventory changes of one player until the transaction ends (purchases re-check the
 * capacity under it, so concurrent purchases cannot overfill an inventory).
 */
export async function lockPlayerInventory(tx: Queryable, appId: string, playerId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(${inventoryLockKey('$1', '$2')})`, [appId, playerId]);
}

/** The advisory lock key of a player's inventory, from SQL expressions of its app and player ids. */
const inventoryLockKey = (app: string, player: string) => `hashtextextended('chests-inventory:' || ${app} || ':' || ${player}, 0)`;

/**
 * The inventory locks of several players (the key lockPlayerInventory takes), in one statement
 * and in key order, so concurrent transactions locking several (other replicas) cannot deadlock.
 */
export async function lockPlayerInventories(tx: Queryable, players: { appId: string; playerId: string }[]): Promise<void> {
  await tx.query(
    `SELECT pg_advisory_xact_lock(${inventoryLockKey('s.app_id', 's.player_id')})
       FROM (SELECT app_id, player_id FROM unnest($1::text[], $2::text[]) AS t(app_id, player_id) ORDER BY app_id, player_id) s`,
    [players.map((p) => p.appId), players.map((p) => p.playerId)],
  );
}

/** Unopened chests per player of the given players, keyed `<app id> <player id>` (lower case); a player with none has no entry. */
export async function countUnopenedOf(db: Queryable, players: { appId: string; playerId: string }[]): Promise<Map<string, number>> {
  const r = await db.query<{ app_id: string; player_id: string; n: number }>(
    `SELECT c.app_id, c.player_id, count(*)::int AS n
       FROM inventory_chests c JOIN unnest($1::uuid[], $2::uuid[]) AS p(app_id, player_id) ON c.app_id = p.app_id AND c.player_id = p.player_id
      WHERE c.opened_at IS NULL GROUP BY c.app_id, c.player_id`,
    [players.map((p) => p.appId), players.map((p) => p.playerId)],
  );
  return new Map(r.rows.map((row) => [`${row.app_id} ${row.player_id}`, row.n]));
}

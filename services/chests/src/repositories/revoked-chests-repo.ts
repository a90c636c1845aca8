import type { Queryable } from '@ccs/shared';

/**
 * Chests a store refund revoked (table `revoked_chests`, docs/architecture.md "Store refunds"):
 * taken out of the inventory and the mailbox, recorded with what putting them back needs, and
 * restored by the refund's reversal. Every function runs in the refund consumer's transaction,
 * under the player's inventory lock.
 */

/** Which refund (or reversal) of which store purchase acts on a player's chests. */
export interface RefundScope {
  appId: string;
  playerId: string;
  storePurchaseId: string;
  /** The refund's id (a revocation) or the reversal's (a restoration). */
  refundId: string;
}

type Source = 'purchased' | 'earned' | 'welcome' | 'special';

/** The upsert of revoked rows: a new row, or a restored one revoked again (rewritten, its restoration cleared); a row revoked now stays. */
const UPSERT_REVOKED = `ON CONFLICT (id) DO UPDATE SET
       app_id = EXCLUDED.app_id, player_id = EXCLUDED.player_id, store_purchase_id = EXCLUDED.store_purchase_id,
       refund_id = EXCLUDED.refund_id, revoked_at = now(), reversal_id = NULL, restored_at = NULL,
       revoked_from = EXCLUDED.revoked_from, chest_type_id = EXCLUDED.chest_type_id, source = EXCLUDED.source,
       purchase_id = EXCLUDED.purchase_id, banner = EXCLUDED.banner, acquired_at = EXCLUDED.acquired_at,
       unlock_started_at = EXCLUDED.unlock_started_at, unlocks_at = EXCLUDED.unlocks_at
     WHERE revoked_chests.restored_at IS NOT NULL`;

const REVOKED_COLUMNS = `id, app_id, player_id, store_purchase_id, refund_id, revoked_from, chest_type_id, source, purchase_id, banner,
                         acquired_at, unlock_started_at, unlocks_at`;

/** The ids of `ids` whose chest is revoked now (not restored), locked until the transaction ends. */
export async function lockRevokedIds(tx: Queryable, ids: string[]): Promise<Set<string>> {
  const r = await tx.query<{ id: string }>(
    'SELECT id FROM revoked_chests WHERE id = ANY($1::uuid[]) AND restored_at IS NULL ORDER BY id FOR UPDATE',
    [ids],
  );
  return new Set(r.rows.map((row) => row.id));
}

/**
 * Revokes the player's unopened chests of `ids`: takes them out of the inventory and records them
 * as they were (type, source, purchase, banner, acquisition time, timer), in one statement after
 * their rows are locked in id order, as an opening locks the chests it consumes: of an opening and
 * a revocation of one chest, the one that locks it first wins, and the other finds it opened (and
 * keeps it) or gone (404). An opened chest is never taken. A claimed mailbox row of a revoked
 * chest goes too (a later claim of it is then unknown, as the chest is). Returns the ids revoked.
 */
export async function revokeFromInventory(tx: Queryable, scope: RefundScope, ids: string[]): Promise<string[]> {
  const locked = await tx.query<{ id: string }>(
    `SELECT id FROM inventory_chests WHERE app_id = $1 AND player_id = $2 AND id = ANY($3::uuid[]) AND opened_at IS NULL
      ORDER BY id FOR UPDATE`,
    [scope.appId, scope.playerId, ids],
  );
  if (locked.rows.length === 0) return [];
  const r = await tx.query<{ id: string }>(
    `WITH taken AS (
       DELETE FROM inventory_chests WHERE id = ANY($1::uuid[]) AND opened_at IS NULL
       RETURNING id, chest_type_id, source, purchase_id, banner, acquired_at, unlock_started_at, unlocks_at
     )
     INSERT INTO revoked_chests (${REVOKED_COLUMNS})
     SELECT id, $2, $3, $4, $5, 'inventory', chest_type_id, source, purchase_id, banner, acquired_at, unlock_started_at, unlocks_at FROM taken
     ${UPSERT_REVOKED}
     RETURNING id`,
    [locked.rows.map((row) => row.id), scope.appId, scope.playerId, scope.storePurchaseId, scope.refundId],
  );
  const revoked = r.rows.map((row) => row.id);
  await tx.query('DELETE FROM mailbox_items WHERE id = ANY($1::uuid[]) AND claimed_at IS NOT NULL', [revoked]);
  return revoked;
}

/** Revokes the player's waiting (unclaimed, unexpired) mailbox items of `ids`: out of the mailbox, recorded. Returns the ids revoked. */
export async function revokeFromMailbox(tx: Queryable, scope: RefundScope, ids: string[]): Promise<string[]> {
  const r = await tx.query<{ id: string }>(
    `WITH taken AS (
       DELETE FROM mailbox_items WHERE app_id = $1 AND player_id = $2 AND id = ANY($3::uuid[]) AND claimed_at IS NULL AND expires_at > now()
       RETURNING id, chest_type_id, source
     )
     INSERT INTO revoked_chests (${REVOKED_COLUMNS})
     SELECT id, $1, $2, $4, $5, 'mailbox', chest_type_id, source, NULL, NULL, NULL, NULL, NULL FROM taken
     ${UPSERT_REVOKED}
     RETURNING id`,
    [scope.appId, scope.playerId, ids, scope.storePurchaseId, scope.refundId],
  );
  return r.rows.map((row) => row.id);
}

/**
 * Records tombstones for the chests of `ids` that exist nowhere yet (no chest of any player, no
 * mailbox item in any state): their grant has not arrived, and must add nothing when it does.
 * Returns the ids recorded.
 */
export async function revokeUngranted(tx: Queryable, scope: RefundScope, ids: string[]): Promise<string[]> {
  const r = await tx.query<{ id: string }>(
    `INSERT INTO revoked_chests (${REVOKED_COLUMNS})
     SELECT u.id, $2, $3, $4, $5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM unnest($1::uuid[]) AS u(id)
      WHERE NOT EXISTS (SELECT 1 FROM inventory_chests c WHERE c.id = u.id) AND NOT EXISTS (SELECT 1 FROM mailbox_items m WHERE m.id = u.id)
     ${UPSERT_REVOKED}
     RETURNING id`,
    [ids, scope.appId, scope.playerId, scope.storePurchaseId, scope.refundId],
  );
  return r.rows.map((row) => row.id);
}

/** A revoked chest to restore: its id, and whether its grant had arrived (a tombstone's had not). */
export interface Restorable {
  id: string;
  granted: boolean;
}

/** The chests of `ids` that refunds of the scope's purchase revoked from the player and that are still revoked, locked. */
export async function lockRestorable(tx: Queryable, scope: RefundScope, ids: string[]): Promise<Restorable[]> {
  const r = await tx.query<{ id: string; granted: boolean }>(
    `SELECT id, revoked_from IS NOT NULL AS granted FROM revoked_chests
      WHERE app_id = $1 AND player_id = $2 AND store_purchase_id = $3 AND id = ANY($4::uuid[]) AND restored_at IS NULL
      ORDER BY id FOR UPDATE`,
    [scope.appId, scope.playerId, scope.storePurchaseId, ids],
  );
  return r.rows;
}

/**
 * Puts revoked chests back into the player's inventory under their ids, as they were recorded
 * (type, source, purchase, banner, acquisition time and timer, to the microsecond); a chest that
 * was not in the inventory when revoked (the mailbox, or its grant came after) is acquired now.
 */
export async function restoreToInventory(tx: Queryable, scope: RefundScope, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `INSERT INTO inventory_chests (id, app_id, player_id, chest_type_id, source, purchase_id, banner, acquired_at, unlock_started_at, unlocks_at)
     SELECT id, app_id, player_id, chest_type_id, source, purchase_id, banner, coalesce(acquired_at, now()), unlock_started_at, unlocks_at
       FROM revoked_chests WHERE id = ANY($1::uuid[]) AND app_id = $2 AND player_id = $3
     ON CONFLICT (id) DO NOTHING`,
    [ids, scope.appId, scope.playerId],
  );
}

/** Puts revoked chests back into the player's mailbox under their ids, to wait `ttlDays` from now, as a grant's overflow does. */
export async function restoreToMailbox(tx: Queryable, scope: RefundScope, ids: string[], ttlDays: number): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `INSERT INTO mailbox_items (id, app_id, player_id, chest_type_id, source, expires_at)
     SELECT id, app_id, player_id, chest_type_id, source, now() + make_interval(days => $4)
       FROM revoked_chests WHERE id = ANY($1::uuid[]) AND app_id = $2 AND player_id = $3
     ON CONFLICT (id) DO NOTHING`,
    [ids, scope.appId, scope.playerId, ttlDays],
  );
}

/** Marks chests restored by the scope's reversal. */
export async function markRestored(tx: Queryable, scope: RefundScope, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query('UPDATE revoked_chests SET reversal_id = $2, restored_at = now() WHERE id = ANY($1::uuid[]) AND restored_at IS NULL', [
    ids,
    scope.refundId,
  ]);
}

/** A chest grant as the grant consumer resolved it. */
export interface GrantToHold {
  id: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  source: Source;
}

/**
 * The grants of `grants` whose chest a refund revoked (and no reversal restored): they must add
 * nothing. A tombstone (the refund came before its grant) takes the grant's chest type and source,
 * so that a reversal can put the chest where the grant would have. One statement.
 */
export async function holdRevokedGrants(tx: Queryable, grants: GrantToHold[]): Promise<Set<string>> {
  if (grants.length === 0) return new Set();
  const rows = grants.map((g) => ({ id: g.id, app_id: g.appId, player_id: g.playerId, chest_type_id: g.chestTypeId, source: g.source }));
  const r = await tx.query<{ id: string }>(
    `WITH g AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS g(id uuid, app_id uuid, player_id uuid, chest_type_id uuid, source text)
     ), filled AS (
       UPDATE revoked_chests r SET revoked_from = 'grant', chest_type_id = g.chest_type_id, source = g.source
         FROM g WHERE r.id = g.id AND r.app_id = g.app_id AND r.player_id = g.player_id AND r.restored_at IS NULL AND r.revoked_from IS NULL
     )
     SELECT r.id FROM revoked_chests r JOIN g ON r.id = g.id AND r.app_id = g.app_id AND r.player_id = g.player_id WHERE r.restored_at IS NULL`,
    [JSON.stringify(rows)],
  );
  return new Set(r.rows.map((row) => row.id));
}

import { randomUUID } from 'node:crypto';
import type { AppContent, Queryable, UnlockRules } from '@ccs/shared';
import { chestTypeId } from '../chest-type-id.js';

/** The key a chest type needs to open, if any. */
export interface RequiredKey {
  currency: string;
  amount: number;
}

/**
 * What a chest debit pays for: the key that opens a key-required chest, or the skip of a
 * time-locked chest's timer. Both are sagas of the same shape (record pending → wallet debit →
 * complete in the effect's transaction, or refund), settled by the same sweeper.
 */
export type DebitPurpose = 'key' | 'unlock_skip';

/**
 * Stores each chest type's `requires_key` and `unlock` of a content version that became current
 * (in the content consumer's transaction, after applyContentVersion replaced the catalog).
 */
export async function applyChestMechanics(tx: Queryable, appId: string, content: AppContent): Promise<void> {
  for (const ch of content.chests) {
    await tx.query('UPDATE chest_types SET requires_key = $3, unlock = $4 WHERE app_id = $1 AND id = $2', [
      appId,
      chestTypeId(appId, ch.id),
      ch.requires_key ? JSON.stringify(ch.requires_key) : null,
      ch.unlock ? JSON.stringify(ch.unlock satisfies UnlockRules) : null,
    ]);
  }
}

/** The key of a chest type (undefined when it needs none). */
export async function requiredKeyOf(db: Queryable, appId: string, chestTypeId: string): Promise<RequiredKey | undefined> {
  const r = await db.query<{ requires_key: RequiredKey | null }>('SELECT requires_key FROM chest_types WHERE app_id = $1 AND id = $2', [
    appId,
    chestTypeId,
  ]);
  return r.rows[0]?.requires_key ?? undefined;
}

/** Records a chest debit about to be asked of the wallet (a saga's first step); returns its id. */
export async function insertChestDebit(
  db: Queryable,
  d: { appId: string; playerId: string; chestId: string; currency: string; amount: number; purpose: DebitPurpose },
): Promise<string> {
  const id = randomUUID();
  await db.query(
    'INSERT INTO chest_debits (id, app_id, player_id, chest_id, currency, amount, status, purpose) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
    [id, d.appId, d.playerId, d.chestId, d.currency, d.amount, 'pending', d.purpose],
  );
  return id;
}

/** Moves a chest debit from one of `from` to `to`; false when it was in neither (someone else moved it). */
export async function moveChestDebit(db: Queryable, id: string, from: string[], to: string): Promise<boolean> {
  const r = await db.query('UPDATE chest_debits SET status = $3, updated_at = now() WHERE id = $1 AND status = ANY($2::text[])', [id, from, to]);
  return r.rowCount === 1;
}

/** Claims chest debits left pending or refunding longer than `staleMs` (a crash), for the sweeper to refund. */
export async function claimStaleChestDebits(
  db: Queryable,
  staleMs: number,
  limit: number,
): Promise<{ id: string; appId: string; playerId: string; purpose: DebitPurpose }[]> {
  const r = await db.query<{ id: string; app_id: string; player_id: string; purpose: DebitPurpose }>(
    `UPDATE chest_debits SET status = 'refunding', updated_at = now()
      WHERE id IN (SELECT id FROM chest_debits WHERE status IN ('pending', 'refunding') AND updated_at < now() - make_interval(secs => $1 / 1000.0)
                   ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING id, app_id, player_id, purpose`,
    [staleMs, limit],
  );
  return r.rows.map((row) => ({ id: row.id, appId: row.app_id, playerId: row.player_id, purpose: row.purpose }));
}

/** The wallet reference of a chest debit: `key:<id>` or `unlock:<id>`. */
export const debitReference = (purpose: DebitPurpose, id: string): string => `${purpose === 'key' ? 'key' : 'unlock'}:${id}`;

/** The name of the index that lets one timer skip of a chest be pending or completed (migration 0011). */
export const ONE_SKIP_PER_CHEST = 'chest_debits_one_skip';

/** Whether a skip of the chest is being paid right now (its debit recorded, not settled yet). */
export async function skipBeingPaid(db: Queryable, appId: string, chestId: string): Promise<boolean> {
  const r = await db.query(
    "SELECT 1 FROM chest_debits WHERE app_id = $1 AND chest_id = $2 AND purpose = 'unlock_skip' AND status = 'pending' LIMIT 1",
    [appId, chestId],
  );
  return (r.rowCount ?? 0) > 0;
}

import { randomUUID } from 'node:crypto';
import type { AppContent, Queryable } from '@ccs/shared';
import { chestTypeId } from '../chest-type-id.js';

/** The key a chest type needs to open, if any. */
export interface RequiredKey {
  currency: string;
  amount: number;
}

/**
 * Stores each chest type's `requires_key` of a content version that became current (in the
 * content consumer's transaction, after applyContentVersion replaced the catalog).
 */
export async function applyChestKeys(tx: Queryable, appId: string, content: AppContent): Promise<void> {
  for (const ch of content.chests) {
    await tx.query('UPDATE chest_types SET requires_key = $3 WHERE app_id = $1 AND id = $2', [
      appId,
      chestTypeId(appId, ch.id),
      ch.requires_key ? JSON.stringify(ch.requires_key) : null,
    ]);
  }
}

/** The key of a chest type (undefined when it needs none). */
export async function requiredKeyOf(db: Queryable, appId: string, chestTypeId: string): Promise<RequiredKey | undefined> {
  const r = await db.query<{ requires_key: RequiredKey | null }>('SELECT requires_key FROM chest_types WHERE app_id = $1 AND id = $2', [appId, chestTypeId]);
  return r.rows[0]?.requires_key ?? undefined;
}

/** Records a key debit about to be asked of the wallet (the saga's first step); returns its id. */
export async function insertKeyDebit(db: Queryable, d: { appId: string; playerId: string; chestId: string } & RequiredKey): Promise<string> {
  const id = randomUUID();
  await db.query('INSERT INTO key_debits (id, app_id, player_id, chest_id, currency, amount, status) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    id, d.appId, d.playerId, d.chestId, d.currency, d.amount, 'pending',
  ]);
  return id;
}

/** Moves a key debit from one of `from` to `to`; false when it was in neither (someone else moved it). */
export async function moveKeyDebit(db: Queryable, id: string, from: string[], to: string): Promise<boolean> {
  const r = await db.query('UPDATE key_debits SET status = $3, updated_at = now() WHERE id = $1 AND status = ANY($2::text[])', [id, from, to]);
  return r.rowCount === 1;
}

/** Claims key debits left pending or refunding longer than `staleMs` (a crash), for the sweeper to refund. */
export async function claimStaleKeyDebits(db: Queryable, staleMs: number, limit: number): Promise<{ id: string; appId: string; playerId: string }[]> {
  const r = await db.query<{ id: string; app_id: string; player_id: string }>(
    `UPDATE key_debits SET status = 'refunding', updated_at = now()
      WHERE id IN (SELECT id FROM key_debits WHERE status IN ('pending', 'refunding') AND updated_at < now() - make_interval(secs => $1 / 1000.0)
                   ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING id, app_id, player_id`,
    [staleMs, limit],
  );
  return r.rows.map((row) => ({ id: row.id, appId: row.app_id, playerId: row.player_id }));
}

/** The wallet reference of a key debit. */
export const keyReference = (id: string): string => `key:${id}`;

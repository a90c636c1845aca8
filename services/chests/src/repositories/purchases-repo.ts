import type { Queryable } from '@ccs/shared';

/** The states of a purchase saga. */
export type PurchaseStatus = 'pending' | 'debited' | 'completed' | 'compensating' | 'refunded' | 'failed';

/** A purchase as the saga and the sweeper need it. */
export interface PurchaseRecord {
  id: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  currency: string;
  quantity: number;
  amount: string;
  status: PurchaseStatus;
}

/** Records a purchase before anything is debited, so an interrupted saga can be found. */
export async function insertPurchase(db: Queryable, p: Omit<PurchaseRecord, 'status'> & { idempotencyKey?: string }): Promise<void> {
  await db.query(
    `INSERT INTO purchases (id, app_id, player_id, chest_type_id, currency, quantity, amount, status, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8)`,
    [p.id, p.appId, p.playerId, p.chestTypeId, p.currency, p.quantity, p.amount, p.idempotencyKey ?? null],
  );
}

/** The purchase a player made with an Idempotency-Key (a failed one released its key). */
export async function findPurchaseByKey(db: Queryable, appId: string, playerId: string, key: string) {
  const r = await db.query<{ chest_type_id: string; currency: string; quantity: number; status: PurchaseStatus; answer: unknown }>(
    `SELECT chest_type_id, currency, quantity, status, answer FROM purchases
      WHERE app_id = $1 AND player_id = $2 AND idempotency_key = $3`,
    [appId, playerId, key],
  );
  const row = r.rows[0];
  return row && { chestTypeId: row.chest_type_id, currency: row.currency, quantity: row.quantity, status: row.status, answer: row.answer };
}

/** Keeps a completed purchase's answer for a retry with its Idempotency-Key (in the completing transaction). */
export async function storePurchaseAnswer(tx: Queryable, id: string, answer: unknown): Promise<void> {
  await tx.query('UPDATE purchases SET answer = $2 WHERE id = $1 AND idempotency_key IS NOT NULL', [id, JSON.stringify(answer)]);
}

/** Moves a purchase to `to` if it is in one of `from`; false when it was not (someone else moved it). */
export async function transition(db: Queryable, id: string, from: PurchaseStatus[], to: PurchaseStatus, failure?: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE purchases SET status = $3, failure = COALESCE($4, failure), updated_at = now(),
            -- A purchase that ends without chests releases its Idempotency-Key for a corrected retry.
            idempotency_key = CASE WHEN $3 IN ('failed', 'refunded') THEN NULL ELSE idempotency_key END
     WHERE id = $1 AND status = ANY($2::text[])`,
    [id, from, to, failure ?? null],
  );
  return r.rowCount === 1;
}

/** Locks a purchase row for the rest of the transaction and returns its status. */
export async function lockPurchase(tx: Queryable, id: string): Promise<PurchaseStatus | undefined> {
  const r = await tx.query<{ status: PurchaseStatus }>('SELECT status FROM purchases WHERE id = $1 FOR UPDATE', [id]);
  return r.rows[0]?.status;
}

/**
 * Claims purchases left unsettled longer than `staleMs` (a crash mid-saga) for compensation: they
 * become `compensating`, so neither the saga nor another sweeper completes them meanwhile.
 */
export async function claimStalePurchases(db: Queryable, staleMs: number, limit: number): Promise<PurchaseRecord[]> {
  const r = await db.query<{
    id: string;
    app_id: string;
    player_id: string;
    chest_type_id: string;
    currency: string;
    quantity: number;
    amount: string;
    status: PurchaseStatus;
  }>(
    `UPDATE purchases SET status = 'compensating', updated_at = now()
     WHERE id IN (
       SELECT id FROM purchases
       WHERE status IN ('pending', 'debited', 'compensating') AND updated_at < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id, app_id, player_id, chest_type_id, currency, quantity, amount, status`,
    [staleMs, limit],
  );
  return r.rows.map((x) => ({
    id: x.id,
    appId: x.app_id,
    playerId: x.player_id,
    chestTypeId: x.chest_type_id,
    currency: x.currency,
    quantity: x.quantity,
    amount: x.amount,
    status: x.status,
  }));
}

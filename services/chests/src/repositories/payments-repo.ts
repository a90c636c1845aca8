import type { Queryable } from '@ccs/shared';

/** What a payment pays for: bought chests, the key that opens a chest, or the skip of a chest's timer. */
export type PaymentKind = 'purchase' | 'key' | 'skip';

/**
 * The states of every payment (migration 0012): pending → debited → completed, a refusal → failed,
 * pending/debited → compensating → refunded (failed when nothing had been debited).
 */
export type PaymentStatus = 'pending' | 'debited' | 'completed' | 'compensating' | 'refunded' | 'failed';

/** A payment as its saga names it: its id within its app, and its kind (which gives its wallet reference). */
export interface PaymentRef {
  id: string;
  appId: string;
  kind: PaymentKind;
}

/** What is recorded before the wallet is asked: who pays what, and what for. */
export type NewPayment = {
  appId: string;
  playerId: string;
  currency: string;
  amount: string;
} & ({ kind: 'purchase'; chestTypeId: string; quantity: number; idempotencyKey?: string } | { kind: 'key' | 'skip'; chestId: string });

/** The wallet reference of a payment: a purchase's id, `key:<id>` or `unlock:<id>`. */
export function paymentReference(p: Pick<PaymentRef, 'id' | 'kind'>): string {
  if (p.kind === 'purchase') return p.id;
  return `${p.kind === 'key' ? 'key' : 'unlock'}:${p.id}`;
}

/** The unique index a purchase's Idempotency-Key holds while its purchase is under way or completed. */
export const PURCHASE_KEY_INDEX = 'payments_idempotency';
/** The unique index that lets one timer skip of a chest be pending, debited or completed. */
export const ONE_SKIP_PER_CHEST = 'payments_one_skip';

/** Records a payment (`pending`) before anything is debited, so a crash from here on is found by the sweeper. */
export async function insertPayment(db: Queryable, id: string, p: NewPayment): Promise<void> {
  const purchase = p.kind === 'purchase' ? p : undefined;
  await db.query(
    `INSERT INTO payments (id, kind, app_id, player_id, currency, amount, status, chest_type_id, quantity, idempotency_key, chest_id)
     VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $10)`,
    [
      id,
      p.kind,
      p.appId,
      p.playerId,
      p.currency,
      p.amount,
      purchase?.chestTypeId ?? null,
      purchase?.quantity ?? null,
      purchase?.idempotencyKey ?? null,
      p.kind === 'purchase' ? null : p.chestId,
    ],
  );
}

/**
 * Moves a payment of the app to `to` if it is in one of `from`; false when it was not (someone
 * else moved it). A payment that ends without its effect releases its Idempotency-Key.
 */
export async function transitionPayment(
  db: Queryable,
  p: Pick<PaymentRef, 'id' | 'appId'>,
  from: PaymentStatus[],
  to: PaymentStatus,
  failure?: string,
): Promise<boolean> {
  const r = await db.query(
    `UPDATE payments SET status = $4, failure = COALESCE($5, failure), updated_at = now(),
            idempotency_key = CASE WHEN $4 IN ('failed', 'refunded') THEN NULL ELSE idempotency_key END
      WHERE id = $1 AND app_id = $2 AND status = ANY($3::text[])`,
    [p.id, p.appId, from, to, failure ?? null],
  );
  return r.rowCount === 1;
}

/** Locks a payment of the app for the rest of the transaction and returns its status. */
export async function lockPayment(tx: Queryable, p: Pick<PaymentRef, 'id' | 'appId'>): Promise<PaymentStatus | undefined> {
  const r = await tx.query<{ status: PaymentStatus }>('SELECT status FROM payments WHERE id = $1 AND app_id = $2 FOR UPDATE', [p.id, p.appId]);
  return r.rows[0]?.status;
}

/** Keeps a completed purchase's answer for a retry with its Idempotency-Key (in the completing transaction). */
export async function storePurchaseAnswer(tx: Queryable, p: Pick<PaymentRef, 'id' | 'appId'>, answer: unknown): Promise<void> {
  await tx.query('UPDATE payments SET answer = $3 WHERE id = $1 AND app_id = $2 AND idempotency_key IS NOT NULL', [
    p.id,
    p.appId,
    JSON.stringify(answer),
  ]);
}

/** The purchase a player made with an Idempotency-Key (a failed or refunded one released its key). */
export async function findPurchaseByKey(db: Queryable, appId: string, playerId: string, key: string) {
  const r = await db.query<{ chest_type_id: string; currency: string; quantity: number; status: PaymentStatus; answer: unknown }>(
    `SELECT chest_type_id, currency, quantity, status, answer FROM payments
      WHERE app_id = $1 AND player_id = $2 AND idempotency_key = $3 AND kind = 'purchase'`,
    [appId, playerId, key],
  );
  const row = r.rows[0];
  return row && { chestTypeId: row.chest_type_id, currency: row.currency, quantity: row.quantity, status: row.status, answer: row.answer };
}

/** A payment the sweeper claimed: enough to compensate it and to say whose it was. */
export interface ClaimedPayment extends PaymentRef {
  playerId: string;
}

/**
 * Claims payments of any kind left unsettled (`pending`, `debited` or `compensating`) longer than
 * `staleMs` (a crash mid-saga): they become `compensating`, so neither their saga nor another
 * sweeper completes them meanwhile (`FOR UPDATE SKIP LOCKED`: replicas share them).
 */
export async function claimStalePayments(db: Queryable, staleMs: number, limit: number): Promise<ClaimedPayment[]> {
  const r = await db.query<{ id: string; kind: PaymentKind; app_id: string; player_id: string }>(
    `UPDATE payments SET status = 'compensating', updated_at = now()
      WHERE id IN (
        SELECT id FROM payments
         WHERE status IN ('pending', 'debited', 'compensating') AND updated_at < now() - make_interval(secs => $1::double precision / 1000)
         ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, app_id, player_id`,
    [staleMs, limit],
  );
  return r.rows.map((x) => ({ id: x.id, kind: x.kind, appId: x.app_id, playerId: x.player_id }));
}

/** Whether a skip of the chest is being paid right now (its payment recorded, not settled yet). */
export async function skipBeingPaid(db: Queryable, appId: string, chestId: string): Promise<boolean> {
  const r = await db.query(
    "SELECT 1 FROM payments WHERE app_id = $1 AND chest_id = $2 AND kind = 'skip' AND status IN ('pending', 'debited') LIMIT 1",
    [appId, chestId],
  );
  return (r.rowCount ?? 0) > 0;
}

/** One payment of a player as the studio's support lists it. */
export interface PaymentListed {
  id: string;
  kind: PaymentKind;
  chestTypeId: string | null;
  quantity: number | null;
  chestId: string | null;
  currency: string;
  amount: string;
  status: PaymentStatus;
  createdAt: Date;
}

/** The player's payments of every kind and status, the newest first (at most `limit`), and how many there are. */
export async function listPlayerPayments(
  db: Queryable,
  appId: string,
  playerId: string,
  limit: number,
): Promise<{ payments: PaymentListed[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.query<{
      id: string;
      kind: PaymentKind;
      chest_type_id: string | null;
      quantity: number | null;
      chest_id: string | null;
      currency: string;
      amount: string;
      status: PaymentStatus;
      created_at: Date;
    }>(
      `SELECT id, kind, chest_type_id, quantity, chest_id, currency, amount::text AS amount, status, created_at
         FROM payments WHERE app_id = $1 AND player_id = $2 ORDER BY created_at DESC, id LIMIT $3`,
      [appId, playerId, limit],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE app_id = $1 AND player_id = $2', [appId, playerId]),
  ]);
  return {
    payments: rows.rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      chestTypeId: r.chest_type_id,
      quantity: r.quantity,
      chestId: r.chest_id,
      currency: r.currency,
      amount: r.amount,
      status: r.status,
      createdAt: r.created_at,
    })),
    total: count.rows[0]!.n,
  };
}

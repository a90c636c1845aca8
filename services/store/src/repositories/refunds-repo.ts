import type { Queryable, StorePlatform, StoreRefundView } from '@ccs/shared';

/** A refund (or a refund's reversal) as applied. */
export interface NewRefund {
  id: string;
  purchaseId: string;
  appId: string;
  playerId: string;
  kind: 'refund' | 'reversal';
  reason: string;
  policy: 'debt' | 'revoke_then_debt';
  currencies: { currency: string; amount: string }[];
  chestIds: string[];
  notificationId: string | null;
  eventAt: Date;
}

export async function insertRefund(tx: Queryable, r: NewRefund): Promise<void> {
  await tx.query(
    `INSERT INTO refunds (id, purchase_id, app_id, player_id, kind, reason, policy, currencies, chest_ids, notification_id, event_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::uuid[], $10, $11)`,
    [r.id, r.purchaseId, r.appId, r.playerId, r.kind, r.reason, r.policy, JSON.stringify(r.currencies), r.chestIds, r.notificationId, r.eventAt],
  );
}

/** The latest refund (not reversal) of a purchase: what a reversal gives back. */
export async function lastRefundOf(q: Queryable, purchaseId: string): Promise<NewRefund | undefined> {
  const r = await q.query<RefundRow>(`${SELECT} WHERE r.purchase_id = $1 AND r.kind = 'refund' ORDER BY r.created_at DESC LIMIT 1`, [purchaseId]);
  const row = r.rows[0];
  return (
    row && {
      id: row.id,
      purchaseId: row.purchase_id,
      appId: row.app_id,
      playerId: row.player_id,
      kind: row.kind,
      reason: row.reason,
      policy: row.policy,
      currencies: row.currencies,
      chestIds: row.chest_ids,
      notificationId: row.notification_id,
      eventAt: row.event_at,
    }
  );
}

interface RefundRow {
  id: string;
  purchase_id: string;
  app_id: string;
  player_id: string;
  platform: StorePlatform;
  transaction_id: string;
  product_id: string | null;
  store_product_id: string;
  kind: 'refund' | 'reversal';
  reason: string;
  policy: 'debt' | 'revoke_then_debt';
  currencies: { currency: string; amount: string }[];
  chest_ids: string[];
  notification_id: string | null;
  event_at: Date;
  created_at: Date;
}

const SELECT = `SELECT r.id, r.purchase_id, r.app_id, r.player_id, p.platform, p.transaction_id, p.product_id, p.store_product_id, r.kind, r.reason,
                       r.policy, r.currencies, r.chest_ids, r.notification_id, r.event_at, r.created_at
                  FROM refunds r JOIN purchases p ON p.id = r.purchase_id`;

const toView = (r: RefundRow): StoreRefundView => ({
  id: r.id,
  purchaseId: r.purchase_id,
  playerId: r.player_id,
  platform: r.platform,
  transactionId: r.transaction_id,
  productId: r.product_id ?? r.store_product_id,
  kind: r.kind,
  reason: r.reason,
  policy: r.policy,
  currencies: r.currencies,
  chestIds: r.chest_ids,
  at: r.created_at.toISOString(),
});

/** A player's refunds and reversals, newest first. */
export async function playerRefunds(db: Queryable, appId: string, playerId: string, limit: number): Promise<StoreRefundView[]> {
  const r = await db.query<RefundRow>(`${SELECT} WHERE r.app_id = $1 AND r.player_id = $2 ORDER BY r.created_at DESC, r.id LIMIT $3`, [
    appId,
    playerId,
    limit,
  ]);
  return r.rows.map(toView);
}

/** The refunds and reversals of the purchases named. */
export async function refundsOfPurchases(db: Queryable, appId: string, purchaseIds: string[]): Promise<StoreRefundView[]> {
  if (purchaseIds.length === 0) return [];
  const r = await db.query<RefundRow>(`${SELECT} WHERE r.app_id = $1 AND r.purchase_id = ANY($2::uuid[]) ORDER BY r.created_at, r.id`, [
    appId,
    purchaseIds,
  ]);
  return r.rows.map(toView);
}

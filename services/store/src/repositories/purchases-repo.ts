import {
  outboxRowsCte,
  type Money,
  type OutboxMessage,
  type Queryable,
  type StoreGranted,
  type StoreMoneyTotals,
  type StorePlatform,
} from '@ccs/shared';

/** A store transaction as the store keeps it. */
export interface PurchaseRow {
  id: string;
  appId: string;
  /** Null while only a refund notice knows the transaction (no player submitted it yet). */
  playerId: string | null;
  platform: StorePlatform;
  transactionId: string;
  productId: string | null;
  storeProductId: string;
  environment: string | null;
  quantity: number;
  price: Money | null;
  purchasedAt: Date | null;
  verifiedAt: Date | null;
  purchaseToken: string | null;
  granted: StoreGranted | null;
  state: 'granted' | 'refunded' | 'unclaimed' | 'refunded_unclaimed';
  refundedAt: Date | null;
  refundEventAt: Date | null;
  consumedAt: Date | null;
}

interface Row {
  id: string;
  app_id: string;
  player_id: string | null;
  platform: StorePlatform;
  transaction_id: string;
  product_id: string | null;
  store_product_id: string;
  environment: string | null;
  quantity: number;
  price: string | null;
  currency: string | null;
  purchased_at: Date | null;
  verified_at: Date | null;
  purchase_token: string | null;
  granted: StoreGranted | null;
  state: PurchaseRow['state'];
  refunded_at: Date | null;
  refund_event_at: Date | null;
  consumed_at: Date | null;
}

const COLUMNS = `id, app_id, player_id, platform, transaction_id, product_id, store_product_id, environment, quantity,
  price::text AS price, currency, purchased_at, verified_at, purchase_token, granted, state, refunded_at, refund_event_at, consumed_at`;

/** A price as stored (numeric(21,6)) back to the store's decimal text, without trailing zeros. */
const moneyText = (n: string) => (n.includes('.') ? n.replace(/0+$/, '').replace(/\.$/, '') : n);

const toPurchase = (r: Row): PurchaseRow => ({
  id: r.id,
  appId: r.app_id,
  playerId: r.player_id,
  platform: r.platform,
  transactionId: r.transaction_id,
  productId: r.product_id,
  storeProductId: r.store_product_id,
  environment: r.environment,
  quantity: r.quantity,
  price: r.price !== null && r.currency !== null ? { amount: moneyText(r.price), currency: r.currency } : null,
  purchasedAt: r.purchased_at,
  verifiedAt: r.verified_at,
  purchaseToken: r.purchase_token,
  granted: r.granted,
  state: r.state,
  refundedAt: r.refunded_at,
  refundEventAt: r.refund_event_at,
  consumedAt: r.consumed_at,
});

/** A verified transaction granted to a player: what the claim writes. */
export interface NewPurchase {
  id: string;
  appId: string;
  playerId: string;
  platform: StorePlatform;
  transactionId: string;
  productId: string;
  storeProductId: string;
  environment: string | null;
  quantity: number;
  price: Money | null;
  purchasedAt: Date;
  purchaseToken: string | null;
  granted: StoreGranted;
}

/**
 * Claims a store transaction for a player, as granted, with the durable messages of what it
 * grants (`messages`, written to the outbox by the same statement: either both or neither):
 * inserted unless the transaction is known (any app), or taken over when a refund notice's
 * reversal left it unclaimed in the same app. One statement each way, so no transaction is needed
 * around it; of racing claims the unique index (and the row lock) lets one through. Returns the
 * claimed row, or undefined when another claim holds the transaction.
 */
export async function claimPurchase(q: Queryable, p: NewPurchase, messages: OutboxMessage[]): Promise<PurchaseRow | undefined> {
  const values = [
    p.id,
    p.appId,
    p.playerId,
    p.platform,
    p.transactionId,
    p.productId,
    p.storeProductId,
    p.environment,
    p.quantity,
    p.price?.amount ?? null,
    p.price?.currency ?? null,
    p.purchasedAt,
    p.purchaseToken,
    JSON.stringify(p.granted),
  ];
  const outbox = outboxRowsCte(messages, values.length + 1, 'EXISTS (SELECT 1 FROM claimed)');
  const inserted = await q.query<Row>(
    `WITH claimed AS (
       INSERT INTO purchases (id, app_id, player_id, platform, transaction_id, product_id, store_product_id, environment, quantity,
                              price, currency, purchased_at, purchase_token, granted, state, verified_at, next_consume_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'granted', now(), CASE WHEN $4 = 'google' THEN now() END)
       ON CONFLICT ON CONSTRAINT purchases_transaction DO NOTHING
       RETURNING ${COLUMNS}
     ), messages AS (${outbox.sql})
     SELECT * FROM claimed`,
    [...values, ...outbox.params],
  );
  if (inserted.rows[0]) return toPurchase(inserted.rows[0]);
  // A row written by a refund notice's reversal before anyone claimed it: taken over, keeping its id-less history.
  const taken = await q.query<Row>(
    `WITH claimed AS (
       UPDATE purchases SET id = $1, player_id = $3, product_id = $6, store_product_id = $7, environment = $8, quantity = $9,
              price = $10, currency = $11, purchased_at = $12, purchase_token = $13, granted = $14, state = 'granted', verified_at = now(),
              next_consume_at = CASE WHEN $4 = 'google' THEN now() END
        WHERE platform = $4 AND transaction_id = $5 AND app_id = $2 AND state = 'unclaimed'
        RETURNING ${COLUMNS}
     ), messages AS (${outbox.sql})
     SELECT * FROM claimed`,
    [...values, ...outbox.params],
  );
  return taken.rows[0] && toPurchase(taken.rows[0]);
}

/** The transaction's row, if the store knows it (`lock`: FOR UPDATE, in the caller's transaction). */
export async function findPurchase(
  q: Queryable,
  platform: StorePlatform,
  transactionId: string,
  opts: { lock?: boolean } = {},
): Promise<PurchaseRow | undefined> {
  const r = await q.query<Row>(`SELECT ${COLUMNS} FROM purchases WHERE platform = $1 AND transaction_id = $2${opts.lock ? ' FOR UPDATE' : ''}`, [
    platform,
    transactionId,
  ]);
  return r.rows[0] && toPurchase(r.rows[0]);
}

/**
 * Records a transaction that only a store notice knows so far (no player submitted it): `refunded`
 * (a refund came first: a later submission is refused as revoked) or not (a reversal came first:
 * the order of the notices is kept). Nothing happens when the transaction is known meanwhile.
 */
export async function insertUnclaimed(
  tx: Queryable,
  p: { id: string; appId: string; platform: StorePlatform; transactionId: string; storeProductId: string; refunded: boolean; eventAt: Date },
): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO purchases (id, app_id, platform, transaction_id, store_product_id, state, refunded_at, refund_event_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 = 'refunded_unclaimed' THEN now() END, $7)
     ON CONFLICT ON CONSTRAINT purchases_transaction DO NOTHING`,
    [p.id, p.appId, p.platform, p.transactionId, p.storeProductId, p.refunded ? 'refunded_unclaimed' : 'unclaimed', p.eventAt],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Moves a transaction's refund state as of the store's `eventAt` (the row is locked by the caller). */
export async function setRefundState(tx: Queryable, id: string, state: PurchaseRow['state'], eventAt: Date): Promise<void> {
  await tx.query(
    `UPDATE purchases SET state = $2, refund_event_at = $3,
            refunded_at = CASE WHEN $2 IN ('refunded', 'refunded_unclaimed') THEN coalesce(refunded_at, now()) END
      WHERE id = $1`,
    [id, state, eventAt],
  );
}

/** A player's store transactions, newest first. */
export async function playerPurchases(db: Queryable, appId: string, playerId: string, limit: number): Promise<PurchaseRow[]> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM purchases WHERE app_id = $1 AND player_id = $2 ORDER BY verified_at DESC, id LIMIT $3`, [
    appId,
    playerId,
    limit,
  ]);
  return r.rows.map(toPurchase);
}

/** The app's granted transactions verified in [from, to), in id order after `afterId`, one page. */
export async function purchasesBetween(
  db: Queryable,
  appId: string,
  from: Date,
  to: Date,
  afterId: string | null,
  limit: number,
): Promise<PurchaseRow[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM purchases
      WHERE app_id = $1 AND player_id IS NOT NULL AND verified_at >= $2 AND verified_at < $3 AND ($4::uuid IS NULL OR id > $4)
      ORDER BY id LIMIT $5`,
    [appId, from, to, afterId, limit],
  );
  return r.rows.map(toPurchase);
}

/** Per product of the app: purchases, those refunded now, and the money taken per currency (refunded ones left out). */
export async function productTotals(db: Queryable, appId: string): Promise<Map<string, { purchases: number; refunded: number; revenue: Money[] }>> {
  const r = await db.query<{ product_id: string; purchases: number; refunded: number; revenue: { currency: string; amount: string }[] | null }>(
    `SELECT product_id, count(*)::int AS purchases, count(*) FILTER (WHERE state = 'refunded')::int AS refunded,
            (SELECT json_agg(json_build_object('currency', m.currency, 'amount', m.amount::text) ORDER BY m.currency)
               FROM (SELECT currency, sum(price) AS amount FROM purchases x
                      WHERE x.app_id = $1 AND x.product_id = p.product_id AND x.state = 'granted' AND x.currency IS NOT NULL
                      GROUP BY currency) m) AS revenue
       FROM purchases p WHERE app_id = $1 AND player_id IS NOT NULL GROUP BY product_id`,
    [appId],
  );
  return new Map(
    r.rows.map((row) => [
      row.product_id,
      {
        purchases: row.purchases,
        refunded: row.refunded,
        revenue: (row.revenue ?? []).map((m) => ({ currency: m.currency, amount: moneyText(m.amount) })),
      },
    ]),
  );
}

/** Google purchases granted but not yet consumed whose next attempt is due (SKIP LOCKED: replicas share them). */
export async function dueConsumes(tx: Queryable, limit: number): Promise<PurchaseRow[]> {
  const r = await tx.query<Row>(
    `SELECT ${COLUMNS} FROM purchases
      WHERE platform = 'google' AND consumed_at IS NULL AND state = 'granted' AND next_consume_at <= now()
      ORDER BY next_consume_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return r.rows.map(toPurchase);
}

/**
 * Holds due purchases for one consume each: their next attempt moves `holdMs` later, so neither
 * another replica's sweeper nor the consume after a purchase's answer sends it meanwhile.
 */
export async function holdConsumes(q: Queryable, ids: string[], holdMs: number): Promise<void> {
  await q.query(`UPDATE purchases SET next_consume_at = now() + make_interval(secs => $2::float8 / 1000) WHERE id = ANY($1::uuid[])`, [ids, holdMs]);
}

/**
 * Claims one purchase for its consume if it is due and not consumed, as the sweeper's hold does,
 * in one statement: of the two (this and a sweeper pass) only one gets it. Its row, or undefined.
 */
export async function claimConsume(q: Queryable, appId: string, id: string, holdMs: number): Promise<PurchaseRow | undefined> {
  const r = await q.query<Row>(
    `UPDATE purchases SET next_consume_at = now() + make_interval(secs => $3::float8 / 1000)
      WHERE app_id = $1 AND id = $2 AND platform = 'google' AND consumed_at IS NULL AND state = 'granted' AND next_consume_at <= now()
      RETURNING ${COLUMNS}`,
    [appId, id, holdMs],
  );
  return r.rows[0] && toPurchase(r.rows[0]);
}

/**
 * A consume done (`ok`), or failed: its next attempt after `firstRetryMs` doubled for each earlier
 * failure (at most eight doublings), and never later than `maxRetryMs`.
 */
export async function recordConsume(
  q: Queryable,
  id: string,
  outcome: { ok: true } | { ok: false; firstRetryMs: number; maxRetryMs: number },
): Promise<void> {
  if (outcome.ok) await q.query('UPDATE purchases SET consumed_at = now(), next_consume_at = NULL WHERE id = $1', [id]);
  else
    await q.query(
      `UPDATE purchases SET consume_attempts = consume_attempts + 1,
              next_consume_at = now() + make_interval(secs => least($3::float8, $2::float8 * power(2, least(consume_attempts, 8))) / 1000)
        WHERE id = $1`,
      [id, outcome.firstRetryMs, outcome.maxRetryMs],
    );
}

/**
 * What a player paid in verified store transactions in the current UTC day and month, per currency
 * (refunded ones left out; a transaction counts in the period it was verified in), and when each
 * period ends, by the database's clock (the one `verified_at` is written with): what spend limits
 * in money count.
 */
export async function moneyTotals(db: Queryable, appId: string, playerId: string): Promise<StoreMoneyTotals> {
  const r = await db.query<{ currency: string | null; day: string; month: string | null; day_end: Date; month_end: Date }>(
    `WITH b AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day_start,
                       date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month_start),
          s AS (SELECT p.currency, sum(p.price) FILTER (WHERE p.verified_at >= b.day_start) AS day, sum(p.price) AS month
                  FROM b JOIN purchases p
                    ON p.app_id = $1 AND p.player_id = $2 AND p.state = 'granted' AND p.currency IS NOT NULL AND p.verified_at >= b.month_start
                 GROUP BY p.currency)
     SELECT s.currency, COALESCE(s.day, 0)::text AS day, s.month::text AS month,
            (b.day_start AT TIME ZONE 'UTC' + interval '1 day') AT TIME ZONE 'UTC' AS day_end,
            (b.month_start AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC' AS month_end
       FROM b LEFT JOIN s ON true ORDER BY s.currency`,
    [appId, playerId],
  );
  const spent = (pick: (row: (typeof r.rows)[number]) => string | null): Money[] =>
    r.rows.flatMap((row) => {
      const amount = pick(row);
      return row.currency !== null && amount !== null && Number(amount) > 0 ? [{ currency: row.currency, amount: moneyText(amount) }] : [];
    });
  const first = r.rows[0]!;
  return {
    day: { spent: spent((row) => row.day), resetsAt: first.day_end.toISOString() },
    month: { spent: spent((row) => row.month), resetsAt: first.month_end.toISOString() },
  };
}

/**
 * Serializes one player's store transactions checked against spend limits in money: the period's
 * spend is read, then the transaction claimed, in one database transaction holding this lock.
 */
export async function lockPlayerMoney(tx: Queryable, appId: string, playerId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('store-money:' || $1 || ':' || $2, 0))", [appId, playerId]);
}

import type { Queryable } from '@ccs/shared';

/** A debit recorded under its caller's reference. */
export interface DebitRow {
  playerId: string;
  currencyId: string;
  amount: string;
  balanceAfter: string | null;
  refunded: boolean;
}

/**
 * Records a debit's reference before the money moves; false when the reference exists (a
 * concurrent debit with the same reference waits here for the first one to commit).
 */
export async function claimDebit(
  tx: Queryable,
  d: { appId: string; reference: string; playerId: string; currencyId: string; amount: string },
): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO debits (app_id, reference, player_id, currency_id, amount) VALUES ($1, $2, $3, $4, $5::numeric)
     ON CONFLICT (app_id, reference) DO NOTHING`,
    [d.appId, d.reference, d.playerId, d.currencyId, d.amount],
  );
  return r.rowCount === 1;
}

/**
 * The debit with this reference in the app, if any; `sameAmount` compares its amount with
 * `amount` exactly (so "5" and "5.00" are the same debit).
 */
export async function findDebit(
  q: Queryable,
  appId: string,
  reference: string,
  amount = '0',
): Promise<(DebitRow & { sameAmount: boolean }) | undefined> {
  const r = await q.query<DebitRow & { sameAmount: boolean }>(
    `SELECT player_id AS "playerId", currency_id AS "currencyId", amount::text AS amount,
            balance_after::text AS "balanceAfter", refunded_at IS NOT NULL AS refunded,
            amount = $3::numeric AS "sameAmount"
       FROM debits WHERE app_id = $1 AND reference = $2`,
    [appId, reference, amount],
  );
  return r.rows[0];
}

/** Records the balance a debit left, so a retry can answer exactly as the first call did. */
export async function setDebitBalance(tx: Queryable, appId: string, reference: string, balance: string): Promise<void> {
  await tx.query('UPDATE debits SET balance_after = $3::numeric WHERE app_id = $1 AND reference = $2', [appId, reference, balance]);
}

/**
 * Marks a debit refunded if it was not yet: the row lock and the condition make this succeed
 * for exactly one caller. Returns the debit to credit back, or undefined.
 */
export async function markRefunded(tx: Queryable, appId: string, reference: string): Promise<DebitRow | undefined> {
  const r = await tx.query<DebitRow>(
    `UPDATE debits SET refunded_at = now()
      WHERE app_id = $1 AND reference = $2 AND refunded_at IS NULL
      RETURNING player_id AS "playerId", currency_id AS "currencyId", amount::text AS amount,
                balance_after::text AS "balanceAfter", true AS refunded`,
    [appId, reference],
  );
  return r.rows[0];
}

/**
 * Serialises every debit and refund of one reference: with this lock held, "refund before the
 * debit" and "debit" cannot miss each other.
 */
export async function lockReference(tx: Queryable, appId: string, reference: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${appId}:${reference}`]);
}

/** Voids a reference that was never debited, so a debit arriving later is refused. */
export async function voidReference(tx: Queryable, appId: string, reference: string): Promise<void> {
  await tx.query('INSERT INTO voided_references (app_id, reference) VALUES ($1, $2) ON CONFLICT DO NOTHING', [appId, reference]);
}

/** True when a refund came first and voided this reference. */
export async function isVoided(q: Queryable, appId: string, reference: string): Promise<boolean> {
  const r = await q.query('SELECT 1 FROM voided_references WHERE app_id = $1 AND reference = $2', [appId, reference]);
  return (r.rowCount ?? 0) > 0;
}

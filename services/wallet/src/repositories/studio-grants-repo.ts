import type { Queryable } from '@ccs/shared';

/** A grant already made under a reference: whom, what, and the balance it answered. */
export interface StoredGrant {
  playerId: string;
  currency: string;
  /** The stored amount equals this request's (compared as numbers: "10" and "10.00" are one amount). */
  same: boolean;
  balance: string | null;
}

/** The grant under (app, reference), if any, compared with this request. */
export async function storedGrant(q: Queryable, appId: string, reference: string, amount: string): Promise<StoredGrant | undefined> {
  const r = await q.query<StoredGrant>(
    `SELECT g.player_id AS "playerId", c.code AS currency, g.amount = $3::numeric AS same, g.balance_after::text AS balance
       FROM studio_grants g JOIN currencies c ON c.id = g.currency_id
      WHERE g.app_id = $1 AND g.reference = $2`,
    [appId, reference, amount],
  );
  return r.rows[0];
}

/** Claims a studio grant's reference for the app (false: it is taken, by a grant that committed meanwhile). */
export async function claimGrantReference(
  tx: Queryable,
  appId: string,
  g: { reference: string; playerId: string; currencyId: string; amount: string; requestId: string },
): Promise<boolean> {
  const claim = await tx.query(
    `INSERT INTO studio_grants (app_id, reference, player_id, currency_id, amount, request_id)
     VALUES ($1, $2, $3, $4, $5::numeric, $6) ON CONFLICT (app_id, reference) DO NOTHING`,
    [appId, g.reference, g.playerId, g.currencyId, g.amount, g.requestId],
  );
  return claim.rowCount !== 0;
}

/** Keeps the balance a studio grant answered with its claim. */
export async function setGrantBalance(tx: Queryable, appId: string, reference: string, balance: string): Promise<void> {
  await tx.query('UPDATE studio_grants SET balance_after = $3::numeric WHERE app_id = $1 AND reference = $2', [appId, reference, balance]);
}

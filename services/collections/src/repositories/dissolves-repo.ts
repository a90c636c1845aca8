import type { Queryable } from '@ccs/shared';

/** One dissolve as stored: what it took and what it gave. */
export interface DissolveRow {
  id: string;
  collectibleId: string;
  quantity: number;
  currency: string;
  amount: number;
  copiesLeft: number;
}

/** The player's dissolve under `key`, if one was made. */
export async function findDissolve(q: Queryable, appId: string, playerId: string, key: string): Promise<DissolveRow | undefined> {
  const r = await q.query<{ id: string; collectible_id: string; quantity: number; currency: string; amount: number; copies_left: number }>(
    'SELECT id, collectible_id, quantity, currency, amount, copies_left FROM dissolves WHERE app_id = $1 AND player_id = $2 AND key = $3',
    [appId, playerId, key],
  );
  const row = r.rows[0];
  return (
    row && {
      id: row.id,
      collectibleId: row.collectible_id,
      quantity: row.quantity,
      currency: row.currency,
      amount: row.amount,
      copiesLeft: row.copies_left,
    }
  );
}

/** Records a dissolve under its key; a second insert of the key fails on the primary key (`dissolves_pkey`). */
export async function insertDissolve(q: Queryable, appId: string, playerId: string, key: string, d: DissolveRow): Promise<void> {
  await q.query(
    `INSERT INTO dissolves (app_id, player_id, key, id, collectible_id, quantity, currency, amount, copies_left)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [appId, playerId, key, d.id, d.collectibleId, d.quantity, d.currency, d.amount, d.copiesLeft],
  );
}

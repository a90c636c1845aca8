import type { Queryable } from '@ccs/shared';

/** What a claim found: the key is ours now, or an earlier request holds it. */
export type Claim =
  { claimed: true } | { claimed: false; requestHash: string; response: unknown } | { claimed: false; requestHash: undefined; response: undefined };

/**
 * Claims an Idempotency-Key for (app, player) inside the caller's transaction. The primary key
 * makes a concurrent request with the same key wait for the first one's commit and then see its
 * stored answer, so the two can never both apply.
 */
export async function claimKey(tx: Queryable, appId: string, playerId: string, key: string, requestHash: string): Promise<Claim> {
  const ins = await tx.query(
    `INSERT INTO idempotency_keys (app_id, player_id, key, request_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT (app_id, player_id, key) DO NOTHING`,
    [appId, playerId, key, requestHash],
  );
  if (ins.rowCount === 1) return { claimed: true };
  const r = await tx.query<{ requestHash: string; response: unknown }>(
    'SELECT request_hash AS "requestHash", response FROM idempotency_keys WHERE app_id = $1 AND player_id = $2 AND key = $3',
    [appId, playerId, key],
  );
  const row = r.rows[0];
  return row ? { claimed: false, ...row } : { claimed: false, requestHash: undefined, response: undefined };
}

/** Stores the answer of a claimed key, in the same transaction as the change it describes. */
export async function storeAnswer(tx: Queryable, appId: string, playerId: string, key: string, response: unknown): Promise<void> {
  await tx.query('UPDATE idempotency_keys SET response = $4 WHERE app_id = $1 AND player_id = $2 AND key = $3', [
    appId,
    playerId,
    key,
    JSON.stringify(response),
  ]);
}

/** Forgets keys older than the retention window; returns how many went. */
export async function deleteKeysOlderThan(q: Queryable, hours: number): Promise<number> {
  const r = await q.query('DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)', [hours]);
  return r.rowCount ?? 0;
}

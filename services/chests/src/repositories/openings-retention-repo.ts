import type { Queryable } from '@ccs/shared';

/**
 * Rows of `column` older than `$1` days, or than the longer period its app keeps draw records
 * (`$3`: app id → days, a rule pack's keep_draw_records_days); the first condition lets the BRIN
 * index narrow the scan.
 */
const pastRetention = (column: string) =>
  `${column} < now() - make_interval(days => $1)
   AND ${column} < now() - make_interval(days => greatest($1, coalesce(($3::jsonb ->> app_id::text)::int, 0)))`;

/**
 * Deletes up to `limit` openings opened more than `days` ago, of every app but those that keep
 * draw records longer (`keepLonger`); returns how many went.
 */
export async function deleteOpeningsBatchOlderThan(
  q: Queryable,
  days: number,
  limit: number,
  keepLonger: Record<string, number> = {},
): Promise<number> {
  const r = await q.query(`DELETE FROM openings WHERE id IN (SELECT id FROM openings WHERE ${pastRetention('opened_at')} LIMIT $2)`, [
    days,
    limit,
    JSON.stringify(keepLonger),
  ]);
  return r.rowCount ?? 0;
}

/**
 * Deletes up to `limit` Idempotency-Keys of openings made more than `days` ago (as
 * deleteOpeningsBatchOlderThan counts them): a key goes with its openings. Returns how many went.
 */
export async function deleteOpeningKeysBatchOlderThan(
  q: Queryable,
  days: number,
  limit: number,
  keepLonger: Record<string, number> = {},
): Promise<number> {
  const r = await q.query(
    `DELETE FROM opening_keys WHERE (app_id, player_id, kind, idempotency_key) IN (
       SELECT app_id, player_id, kind, idempotency_key FROM opening_keys WHERE ${pastRetention('created_at')}
        LIMIT $2)`,
    [days, limit, JSON.stringify(keepLonger)],
  );
  return r.rowCount ?? 0;
}

/** Each app's compliance settings of its current content version (none: no row). */
export async function currentCompliance(q: Queryable): Promise<{ appId: string; compliance: unknown }[]> {
  const r = await q.query<{ app_id: string; compliance: unknown }>(
    `SELECT a.app_id, v.compliance FROM apps a JOIN content_versions v ON v.app_id = a.app_id AND v.version = a.content_version
      WHERE v.compliance IS NOT NULL`,
  );
  return r.rows.map((row) => ({ appId: row.app_id, compliance: row.compliance }));
}

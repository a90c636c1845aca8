import type { Queryable } from '@ccs/shared';

/**
 * Deletes up to `limit` openings opened more than `days` ago, of every app (retention is one
 * rule for all); returns how many went.
 */
export async function deleteOpeningsBatchOlderThan(q: Queryable, days: number, limit: number): Promise<number> {
  const r = await q.query(
    `DELETE FROM openings WHERE id IN (
       SELECT id FROM openings WHERE opened_at < now() - make_interval(days => $1) LIMIT $2)`,
    [days, limit],
  );
  return r.rowCount ?? 0;
}

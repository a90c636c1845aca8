import type { Queryable } from '@ccs/shared';

/** One ledger row as the studio reads it, with its currency's code. */
export interface LedgerEntry {
  at: string;
  currency: string;
  delta: string;
  balanceAfter: string;
  reason: string;
  reference: string | null;
}

/** A player's latest `limit` ledger rows, newest first, and how many the player has in all. */
export async function latestLedgerEntries(
  q: Queryable,
  appId: string,
  playerId: string,
  limit: number,
): Promise<{ total: number; entries: LedgerEntry[] }> {
  const [rows, count] = await Promise.all([
    q.query<{ at: Date; code: string; delta: string; balance_after: string; reason: string; reference: string | null }>(
      `SELECT l.created_at AS at, c.code, l.delta::text AS delta, l.balance_after::text AS balance_after, l.reason, l.reference
         FROM ledger l JOIN currencies c ON c.id = l.currency_id
        WHERE l.app_id = $1 AND l.player_id = $2
        ORDER BY l.id DESC LIMIT $3`,
      [appId, playerId, limit],
    ),
    q.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger WHERE app_id = $1 AND player_id = $2', [appId, playerId]),
  ]);
  return {
    total: count.rows[0]!.n,
    entries: rows.rows.map((r) => ({
      at: r.at.toISOString(),
      currency: r.code,
      delta: r.delta,
      balanceAfter: r.balance_after,
      reason: r.reason,
      reference: r.reference,
    })),
  };
}

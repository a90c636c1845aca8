import { AdminPlayerLedger, endpoint, type Pool } from '@ccs/shared';

/** Admin API (player look-up): a player's latest ledger rows with their currency codes, and how many there are. */
export function adminPlayerLedgerEndpoint(pool: Pool) {
  return endpoint(AdminPlayerLedger, async ({ appId, playerId, limit }) => {
    const [rows, count] = await Promise.all([
      pool.query<{ at: Date; code: string; delta: string; balance_after: string; reason: string; reference: string | null }>(
        `SELECT l.created_at AS at, c.code, l.delta::text AS delta, l.balance_after::text AS balance_after, l.reason, l.reference
           FROM ledger l JOIN currencies c ON c.id = l.currency_id
          WHERE l.app_id = $1 AND l.player_id = $2
          ORDER BY l.id DESC LIMIT $3`,
        [appId, playerId, limit],
      ),
      pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger WHERE app_id = $1 AND player_id = $2', [appId, playerId]),
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
  });
}

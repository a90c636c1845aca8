import type { Queryable } from '@ccs/shared';

/**
 * Stores an app's wallet rules from a content version. Returns false, changing nothing, when the
 * stored version is the same or newer (content messages may arrive late or twice).
 */
export async function upsertAppRules(tx: Queryable, appId: string, version: number, playerCreditAllowed: boolean): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO apps (app_id, content_version, player_credit_allowed) VALUES ($1, $2, $3)
     ON CONFLICT (app_id) DO UPDATE
       SET content_version = EXCLUDED.content_version,
           player_credit_allowed = EXCLUDED.player_credit_allowed,
           updated_at = now()
       WHERE apps.content_version < EXCLUDED.content_version`,
    [appId, version, playerCreditAllowed],
  );
  return r.rowCount === 1;
}

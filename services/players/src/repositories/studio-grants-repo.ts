import type { Queryable } from '@ccs/shared';

/** What a reference granted the first time. */
export interface StudioGrant {
  chestTypeId: string;
  quantity: number;
}

/**
 * Records a studio grant under its reference inside the caller's transaction. Returns undefined
 * when this is the reference's first grant, else the grant it made before (a concurrent twin waits
 * on the primary key, then finds the first one's row).
 */
export async function recordStudioGrant(
  tx: Queryable,
  g: { appId: string; playerId: string; reference: string } & StudioGrant,
): Promise<StudioGrant | undefined> {
  const ins = await tx.query(
    `INSERT INTO studio_chest_grants (app_id, player_id, reference, chest_type_id, quantity) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (app_id, player_id, reference) DO NOTHING`,
    [g.appId, g.playerId, g.reference, g.chestTypeId, g.quantity],
  );
  if (ins.rowCount === 1) return undefined;
  const r = await tx.query<StudioGrant>(
    'SELECT chest_type_id AS "chestTypeId", quantity FROM studio_chest_grants WHERE app_id = $1 AND player_id = $2 AND reference = $3',
    [g.appId, g.playerId, g.reference],
  );
  return r.rows[0];
}

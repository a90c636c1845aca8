import type { Queryable } from '@ccs/shared';

/** What a reference granted the first time. */
export interface StudioChestGrant {
  chestTypeId: string;
  quantity: number;
}

/**
 * The slug of the app's current chest type (one of the content in force, `in_catalog`) named by
 * its slug or its catalog id; undefined when the app has none such.
 */
export async function currentChestSlug(db: Queryable, appId: string, chest: string): Promise<string | undefined> {
  const r = await db.query<{ slug: string }>(
    `SELECT slug FROM chest_types WHERE app_id = $1 AND in_catalog AND (slug = $2 OR id::text = lower($2))
      ORDER BY slug = $2 DESC LIMIT 1`,
    [appId, chest],
  );
  return r.rows[0]?.slug;
}

/**
 * Records a studio grant under its reference inside the caller's transaction. Returns undefined
 * when this is the reference's first grant, else the grant it made before (a concurrent twin waits
 * on the primary key, then finds the first one's row).
 */
export async function recordStudioChestGrant(
  tx: Queryable,
  g: { appId: string; playerId: string; reference: string } & StudioChestGrant,
): Promise<StudioChestGrant | undefined> {
  const ins = await tx.query(
    `INSERT INTO studio_chest_grants (app_id, player_id, reference, chest_type_id, quantity) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (app_id, player_id, reference) DO NOTHING`,
    [g.appId, g.playerId, g.reference, g.chestTypeId, g.quantity],
  );
  if (ins.rowCount === 1) return undefined;
  const r = await tx.query<StudioChestGrant>(
    'SELECT chest_type_id AS "chestTypeId", quantity FROM studio_chest_grants WHERE app_id = $1 AND player_id = $2 AND reference = $3',
    [g.appId, g.playerId, g.reference],
  );
  return r.rows[0];
}

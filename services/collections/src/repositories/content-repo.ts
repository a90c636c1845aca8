import type { AppContent, DuplicatesRules, Queryable } from '@ccs/shared';

/**
 * Records `version` as the app's content version. Returns false, changing nothing, when the
 * stored version is the same or newer (content messages may arrive late or twice). The row lock
 * taken here serialises two versions of one app applied at once.
 */
export async function claimContentVersion(tx: Queryable, appId: string, version: number): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO apps (app_id, content_version) VALUES ($1, $2)
     ON CONFLICT (app_id) DO UPDATE SET content_version = EXCLUDED.content_version, updated_at = now()
       WHERE apps.content_version < EXCLUDED.content_version`,
    [appId, version],
  );
  return r.rowCount === 1;
}

/**
 * Keeps a content version's duplicate rules (none: every copy is kept), whether or not the
 * version becomes the current one: grants made under it are judged by them. A version's rules
 * never change, so a second delivery changes nothing.
 */
export async function saveDuplicateRules(tx: Queryable, appId: string, version: number, rules: DuplicatesRules | undefined): Promise<void> {
  await tx.query(
    `INSERT INTO duplicate_rules (app_id, content_version, rules) VALUES ($1, $2, $3) ON CONFLICT (app_id, content_version) DO NOTHING`,
    [appId, version, rules ? JSON.stringify(rules) : null],
  );
}

/** Upserts the app's rarities and retires those the new version leaves out. */
export async function upsertRarities(tx: Queryable, appId: string, rarities: AppContent['rarities']): Promise<void> {
  await tx.query(
    `INSERT INTO rarities (app_id, id, name, drop_rate, experience, rank, retired_at)
     SELECT $1, r.id, r.name, r.drop_rate, r.experience, r.rank, NULL
       FROM jsonb_to_recordset($2::jsonb) AS r(id text, name text, drop_rate double precision, experience integer, rank integer)
     ON CONFLICT (app_id, id) DO UPDATE
       SET name = EXCLUDED.name, drop_rate = EXCLUDED.drop_rate, experience = EXCLUDED.experience,
           rank = EXCLUDED.rank, retired_at = NULL`,
    [appId, JSON.stringify(rarities)],
  );
  await tx.query(`UPDATE rarities SET retired_at = now() WHERE app_id = $1 AND retired_at IS NULL AND NOT (id = ANY($2::text[]))`, [
    appId,
    rarities.map((r) => r.id),
  ]);
}

/**
 * Upserts the app's collections and their collectibles (keeping the content file's order) and
 * retires what the new version leaves out. Owned items are untouched: they live in their own table.
 */
export async function upsertCollections(tx: Queryable, appId: string, collections: AppContent['collections']): Promise<void> {
  const cols = collections.map((c, position) => ({
    id: c.id,
    name: c.name,
    description: c.description,
    position,
    completion_reward: c.completion_reward ?? null,
  }));
  const items = collections.flatMap((c) => c.collectibles.map((i) => ({ ...i, collection_id: c.id }))).map((i, position) => ({ ...i, position }));
  await tx.query(
    `INSERT INTO collections (app_id, id, name, description, position, completion_reward, retired_at)
     SELECT $1, c.id, c.name, c.description, c.position, c.completion_reward, NULL
       FROM jsonb_to_recordset($2::jsonb) AS c(id text, name text, description text, position integer, completion_reward jsonb)
     ON CONFLICT (app_id, id) DO UPDATE
       SET name = EXCLUDED.name, description = EXCLUDED.description, position = EXCLUDED.position,
           completion_reward = EXCLUDED.completion_reward, retired_at = NULL`,
    [appId, JSON.stringify(cols)],
  );
  await tx.query(
    `INSERT INTO collectibles (app_id, id, collection_id, name, description, images, rarity, position, retired_at)
     SELECT $1, i.id, i.collection_id, i.name, i.description, i.images, i.rarity, i.position, NULL
       FROM jsonb_to_recordset($2::jsonb)
         AS i(id text, collection_id text, name text, description text, images jsonb, rarity text, position integer)
     ON CONFLICT (app_id, id) DO UPDATE
       SET collection_id = EXCLUDED.collection_id, name = EXCLUDED.name, description = EXCLUDED.description,
           images = EXCLUDED.images, rarity = EXCLUDED.rarity, position = EXCLUDED.position, retired_at = NULL`,
    [appId, JSON.stringify(items)],
  );
  await tx.query(`UPDATE collectibles SET retired_at = now() WHERE app_id = $1 AND retired_at IS NULL AND NOT (id = ANY($2::text[]))`, [
    appId,
    items.map((i) => i.id),
  ]);
  await tx.query(`UPDATE collections SET retired_at = now() WHERE app_id = $1 AND retired_at IS NULL AND NOT (id = ANY($2::text[]))`, [
    appId,
    cols.map((c) => c.id),
  ]);
}

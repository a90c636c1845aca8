import { ChestRulesSchema, type Queryable } from '@ccs/shared';
import { inForce } from './chest-types-repo.js';

/** The player's pity counters: group → openings since the last pity-rarity item, with the rule last used. */
export async function pityCounters(db: Queryable, appId: string, playerId: string, groups?: string[]) {
  const r = await db.query<{ pity_group: string; opens_since: number; rarity: string; hard: number }>(
    `SELECT pity_group, opens_since, rarity, hard FROM pity_counters
     WHERE app_id = $1 AND player_id = $2 AND ($3::text[] IS NULL OR pity_group = ANY($3::text[])) ORDER BY pity_group`,
    [appId, playerId, groups ?? null],
  );
  return new Map(r.rows.map((row) => [row.pity_group, { opensSince: row.opens_since, rarity: row.rarity, hard: row.hard }]));
}

/** The app's catalog chest types whose rules in force have pity: id, slug and rules. */
export async function catalogPityTypes(db: Queryable, appId: string) {
  const rules = inForce('t').rules;
  const r = await db.query<{ id: string; slug: string; rules: unknown }>(
    `SELECT id, slug, rules FROM (SELECT id, slug, position, ${rules} AS rules FROM chest_types t WHERE app_id = $1 AND in_catalog) t
      WHERE rules ? 'pity' ORDER BY position`,
    [appId],
  );
  return r.rows.map((row) => ({ id: row.id, slug: row.slug, rules: ChestRulesSchema.parse(row.rules) }));
}

import { preparedStatement, type CompletionReward, type Queryable } from '@ccs/shared';

/** A collection a player has just completed, and the reward its current content gives (null: none). */
export interface Completion {
  collectionId: string;
  reward: CompletionReward | null;
  completedAt: Date;
}

/** When the player completed each collection they completed (collection id → time). */
export async function completionsOf(q: Queryable, appId: string, playerId: string): Promise<Map<string, Date>> {
  const r = await q.query<{ collection_id: string; completed_at: Date }>(
    'SELECT collection_id, completed_at FROM collection_completions WHERE app_id = $1 AND player_id = $2',
    [appId, playerId],
  );
  return new Map(r.rows.map((row) => [row.collection_id, row.completed_at]));
}

const RECORD_COMPLETIONS = preparedStatement(
  'collections_record_completions',
  `INSERT INTO collection_completions (app_id, player_id, collection_id, content_version, reward)
     SELECT c.app_id, $2, c.id, a.content_version, c.completion_reward
       FROM collections c JOIN apps a ON a.app_id = c.app_id
      WHERE c.app_id = $1 AND c.id = ANY($3::text[]) AND c.retired_at IS NULL
        AND EXISTS (SELECT 1 FROM collectibles i WHERE i.app_id = c.app_id AND i.collection_id = c.id AND i.retired_at IS NULL)
        AND NOT EXISTS (
          SELECT 1 FROM collectibles i
           WHERE i.app_id = c.app_id AND i.collection_id = c.id AND i.retired_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM player_collectibles p WHERE p.app_id = i.app_id AND p.player_id = $2 AND p.collectible_id = i.id))
      ORDER BY c.id -- one insertion order for every transaction (see touchedBy)
     ON CONFLICT (app_id, player_id, collection_id) DO NOTHING
     RETURNING collection_id, reward, completed_at`,
);

/**
 * Records, in one statement, each of `collectionIds` the player now owns every current
 * collectible of and had not completed before, with the reward of the app's current content;
 * returns those completions. The primary key (app, player, collection) makes a completion, and
 * with it its reward, happen once: a second check, concurrent or later, inserts nothing.
 */
export async function recordCompletions(tx: Queryable, appId: string, playerId: string, collectionIds: string[]): Promise<Completion[]> {
  const r = await tx.query<{ collection_id: string; reward: CompletionReward | null; completed_at: Date }>(
    RECORD_COMPLETIONS.with([appId, playerId, collectionIds]),
  );
  return r.rows.map((row) => ({ collectionId: row.collection_id, reward: row.reward, completedAt: row.completed_at }));
}

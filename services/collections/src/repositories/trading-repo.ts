import type { Queryable, TradingRules } from '@ccs/shared';

/** Stores the trading rules of the app's content version just applied (none: no trading). */
export async function saveTrading(tx: Queryable, appId: string, trading: TradingRules | undefined): Promise<void> {
  await tx.query('UPDATE apps SET trading = $2 WHERE app_id = $1', [appId, trading ? JSON.stringify(trading) : null]);
}

/** The trading rules of the app's current content (null: none, or no content yet). */
export async function readTrading(q: Queryable, appId: string): Promise<TradingRules | null> {
  const r = await q.query<{ trading: TradingRules | null }>('SELECT trading FROM apps WHERE app_id = $1', [appId]);
  return r.rows[0]?.trading ?? null;
}

/** A current collectible of the app: its rarity and collection. */
export interface CollectibleInfo {
  id: string;
  rarity: string;
  collectionId: string;
}

/** The current (not retired) collectibles of the app among `ids`, by id. */
export async function currentCollectibles(q: Queryable, appId: string, ids: string[]): Promise<Map<string, CollectibleInfo>> {
  const r = await q.query<{ id: string; rarity: string; collection_id: string }>(
    'SELECT id, rarity, collection_id FROM collectibles WHERE app_id = $1 AND id = ANY($2::text[]) AND retired_at IS NULL',
    [appId, ids],
  );
  return new Map(r.rows.map((row) => [row.id, { id: row.id, rarity: row.rarity, collectionId: row.collection_id }]));
}

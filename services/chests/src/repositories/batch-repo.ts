import type { Queryable } from '@ccs/shared';
import type { ActiveSeed } from './seeds-repo.js';
import { LOCKED_SQL } from './opening-state-repo.js';

/** One chest of a batch as read before the roll. */
export interface BatchChest {
  id: string;
  playerId: string;
  chestTypeId: string;
  contentVersion: number;
  opened: boolean;
  /** The pity group of its type (rules' group, else the slug), when the type has pity. */
  pityGroup: string | null;
  /** The key currency of its type, when it needs a key (those open one at a time); null otherwise. */
  keyCurrency: string | null;
  /** Set while it is time-locked: when its timer ends, if it runs. */
  locked?: { unlocksAt: Date | null };
}

/** The chests of a batch (those that exist in the app), with their type's pity group. */
export async function readBatchChests(db: Queryable, appId: string, chestIds: string[]): Promise<Map<string, BatchChest>> {
  const r = await db.query<{
    id: string;
    player_id: string;
    chest_type_id: string;
    content_version: number;
    opened: boolean;
    pity_group: string | null;
    key_currency: string | null;
    locked: boolean;
    unlocks_at: Date | null;
  }>(
    `SELECT c.id, c.player_id, c.chest_type_id, t.content_version, c.opened_at IS NOT NULL AS opened, t.requires_key ->> 'currency' AS key_currency,
            ${LOCKED_SQL} AS locked, c.unlocks_at,
            CASE WHEN t.rules ? 'pity' THEN coalesce(t.rules -> 'pity' ->> 'group', t.slug) END AS pity_group
       FROM inventory_chests c JOIN chest_types t ON t.app_id = c.app_id AND t.id = c.chest_type_id
      WHERE c.app_id = $1 AND c.id = ANY($2::uuid[])`,
    [appId, chestIds],
  );
  return new Map(
    r.rows.map((row) => [
      row.id,
      {
        id: row.id,
        playerId: row.player_id,
        chestTypeId: row.chest_type_id,
        contentVersion: row.content_version,
        opened: row.opened,
        pityGroup: row.pity_group,
        keyCurrency: row.key_currency,
        ...(row.locked ? { locked: { unlocksAt: row.unlocks_at } } : {}),
      },
    ]),
  );
}

/** The player's active seed pair and every pity counter, read without a lock (the write compares the nonce). */
export async function readPlayerRollState(
  db: Queryable,
  appId: string,
  playerId: string,
): Promise<{ seed?: ActiveSeed; counters: Map<string, number> }> {
  const [seeds, counters] = await Promise.all([
    db.query<{ id: string; server_seed_hash: string; client_seed: string; next_nonce: number; server_seed_encrypted: string; created_at: Date }>(
      `SELECT id, server_seed_hash, client_seed, next_nonce, server_seed_encrypted, created_at FROM player_seeds
        WHERE app_id = $1 AND player_id = $2 AND revealed_at IS NULL`,
      [appId, playerId],
    ),
    db.query<{ pity_group: string; opens_since: number }>('SELECT pity_group, opens_since FROM pity_counters WHERE app_id = $1 AND player_id = $2', [
      appId,
      playerId,
    ]),
  ]);
  const s = seeds.rows[0];
  return {
    seed: s && {
      id: s.id,
      serverSeedHash: s.server_seed_hash,
      clientSeed: s.client_seed,
      nextNonce: s.next_nonce,
      serverSeedEncrypted: s.server_seed_encrypted,
      createdAt: s.created_at,
    },
    counters: new Map(counters.rows.map((row) => [row.pity_group, row.opens_since])),
  };
}

/** A keyed batch made before: its chests (in order) and openings. */
export async function findBatch(
  db: Queryable,
  appId: string,
  playerId: string,
  key: string,
): Promise<{ chestIds: string[]; openingIds: string[] } | undefined> {
  const r = await db.query<{ chest_ids: string[]; opening_ids: string[] }>(
    'SELECT chest_ids, opening_ids FROM opening_batches WHERE app_id = $1 AND player_id = $2 AND idempotency_key = $3',
    [appId, playerId, key],
  );
  return r.rows[0] && { chestIds: r.rows[0].chest_ids, openingIds: r.rows[0].opening_ids };
}

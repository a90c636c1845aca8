import type { Queryable } from '@ccs/shared';
import type { RequiredKey } from './chest-debits-repo.js';
import type { ActiveSeed } from './seeds-repo.js';

/** Everything an opening reads before it rolls, in one statement. */
export interface OpeningState {
  chestId: string;
  playerId: string;
  chestTypeId: string;
  /** The content version of the chest type's current rules. */
  contentVersion: number;
  opened: boolean;
  /** The owner's active seed pair; undefined before their first use of one. */
  seed?: ActiveSeed;
  /** The owner's pity counter of the chest type's pity group (0 when none yet). */
  opensSince: number;
  /** The key the chest type needs to open (docs/content.md, "Key-required chests"). */
  requiresKey?: RequiredKey;
  /** A time-locked chest not unlocked yet (docs/content.md, "Time-locked chests"): when it will be, if its timer runs. */
  locked?: { unlocksAt: Date | null };
}

interface Row {
  id: string;
  player_id: string;
  chest_type_id: string;
  content_version: number;
  opened: boolean;
  seed_id: string | null;
  server_seed_hash: string;
  client_seed: string;
  next_nonce: number;
  server_seed_encrypted: string;
  seed_created_at: Date;
  opens_since: number | null;
  requires_key: RequiredKey | null;
  locked: boolean;
  unlocks_at: Date | null;
}

/**
 * Whether inventory chest `c` of type `t` is still time-locked, by the database's clock (time only
 * moves on, so a chest found unlocked stays so while an opening proceeds).
 */
export const LOCKED_SQL = '(t.unlock IS NOT NULL AND (c.unlocks_at IS NULL OR c.unlocks_at > now()))';

/**
 * The chest, its owner's active seed pair and pity counter, read together without a lock: the
 * opening's write (recordOpening) proceeds only if the pair's nonce is still the one read here.
 * Every opening of the player advances that nonce in the same statement as it moves the counter,
 * and a rotation retires the pair, so an unchanged nonce proves the counter and the pair current.
 * The pity group is the one the roll uses: the rules' `group`, else the chest type's slug.
 */
export async function readOpeningState(db: Queryable, appId: string, chestId: string): Promise<OpeningState | undefined> {
  const r = await db.query<Row>(
    `SELECT c.id, c.player_id, c.chest_type_id, t.content_version, c.opened_at IS NOT NULL AS opened,
            s.id AS seed_id, s.server_seed_hash, s.client_seed, s.next_nonce, s.server_seed_encrypted, s.created_at AS seed_created_at,
            pc.opens_since, t.requires_key, ${LOCKED_SQL} AS locked, c.unlocks_at
       FROM inventory_chests c
       JOIN chest_types t ON t.app_id = c.app_id AND t.id = c.chest_type_id
       LEFT JOIN player_seeds s ON s.app_id = c.app_id AND s.player_id = c.player_id AND s.revealed_at IS NULL
       LEFT JOIN pity_counters pc ON pc.app_id = c.app_id AND pc.player_id = c.player_id
                                 AND pc.pity_group = coalesce(t.rules -> 'pity' ->> 'group', t.slug)
      WHERE c.app_id = $1 AND c.id = $2`,
    [appId, chestId],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    chestId: row.id,
    playerId: row.player_id,
    chestTypeId: row.chest_type_id,
    contentVersion: row.content_version,
    opened: row.opened,
    seed: row.seed_id
      ? {
          id: row.seed_id,
          serverSeedHash: row.server_seed_hash,
          clientSeed: row.client_seed,
          nextNonce: row.next_nonce,
          serverSeedEncrypted: row.server_seed_encrypted,
          createdAt: row.seed_created_at,
        }
      : undefined,
    opensSince: row.opens_since ?? 0,
    ...(row.requires_key ? { requiresKey: row.requires_key } : {}),
    ...(row.locked ? { locked: { unlocksAt: row.unlocks_at } } : {}),
  };
}

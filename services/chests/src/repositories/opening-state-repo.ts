import { preparedStatement, type Queryable } from '@ccs/shared';
import type { RequiredKey } from './chest-mechanics-repo.js';
import { inForce } from './chest-types-repo.js';
import type { ActiveSeed } from './seeds-repo.js';

/** One chest of an opening as read before the roll. */
export interface ChestState {
  chestId: string;
  playerId: string;
  chestTypeId: string;
  /** The content version of the chest type's rules in force (a pending change once effective: `inForce`). */
  contentVersion: number;
  opened: boolean;
  /** The key the chest type needs to open (docs/content.md, "Key-required chests"). */
  requiresKey?: RequiredKey;
  /** A banner pull's chest: the banner (slug) it opens as (docs/design.md §8). */
  banner?: string;
  /** A time-locked chest not unlocked yet (docs/content.md, "Time-locked chests"): when it will be, if its timer runs. */
  locked?: { unlocksAt: Date | null };
}

/** Everything an opening of one or more chests reads before it rolls, in one statement. */
export interface OpeningState {
  /** The chests that exist in the app, by id. */
  chests: Map<string, ChestState>;
  /** The caller's active seed pair; undefined before their first use of one. */
  seed?: ActiveSeed;
  /** The caller's pity counters of the chests' pity groups (absent: 0). */
  counters: Map<string, number>;
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
  pity_group: string | null;
  opens_since: number | null;
  requires_key: RequiredKey | null;
  locked: boolean;
  unlocks_at: Date | null;
  banner: string | null;
}

/**
 * Whether inventory chest `c` of type `t` is still time-locked, by the database's clock (time only
 * moves on, so a chest found unlocked stays so while an opening proceeds).
 */
const LOCKED_SQL = '(t.unlock IS NOT NULL AND (c.unlocks_at IS NULL OR c.unlocks_at > now()))';

const toChest = (row: Row): ChestState => ({
  chestId: row.id,
  playerId: row.player_id,
  chestTypeId: row.chest_type_id,
  contentVersion: row.content_version,
  opened: row.opened,
  ...(row.requires_key ? { requiresKey: row.requires_key } : {}),
  ...(row.banner ? { banner: row.banner } : {}),
  ...(row.locked ? { locked: { unlocksAt: row.unlocks_at } } : {}),
});

const toSeed = (row: Row): ActiveSeed | undefined =>
  row.seed_id
    ? {
        id: row.seed_id,
        serverSeedHash: row.server_seed_hash,
        clientSeed: row.client_seed,
        nextNonce: row.next_nonce,
        serverSeedEncrypted: row.server_seed_encrypted,
        createdAt: row.seed_created_at,
      }
    : undefined;

const T = inForce('t');
/**
 * The columns and joins of readOpeningState's statement ($2 the player), its WHERE apart: the
 * chest type's rules in force now (an odds change in its notice period rolls the old rules).
 */
const OPENING_STATE_FROM = `SELECT c.id, c.player_id, c.chest_type_id, ${T.contentVersion} AS content_version, c.opened_at IS NOT NULL AS opened,
              s.id AS seed_id, s.server_seed_hash, s.client_seed, s.next_nonce, s.server_seed_encrypted, s.created_at AS seed_created_at,
              pc.pity_group, pc.opens_since, t.requires_key, ${LOCKED_SQL} AS locked, c.unlocks_at, c.banner
         FROM inventory_chests c
         JOIN chest_types t ON t.app_id = c.app_id AND t.id = c.chest_type_id
         LEFT JOIN player_seeds s ON s.app_id = c.app_id AND s.player_id = $2 AND s.revealed_at IS NULL
         LEFT JOIN pity_counters pc ON pc.app_id = c.app_id AND pc.player_id = $2
                                   AND pc.pity_group = coalesce((${T.rules}) -> 'pity' ->> 'group', t.slug)`;

/**
 * readOpeningState's statement in two forms, both named: one chest (`c.id = $3`), whose cached
 * generic plan is the custom one, and many (`= ANY($3)`), for which Postgres keeps planning each
 * call because a generic plan cannot know the array's length (docs/performance.md, "Named statements").
 */
const READ_ONE_CHEST_STATE = preparedStatement('chests_read_opening_state_one', `${OPENING_STATE_FROM} WHERE c.app_id = $1 AND c.id = $3::uuid`);
const READ_CHESTS_STATE = preparedStatement('chests_read_opening_state', `${OPENING_STATE_FROM} WHERE c.app_id = $1 AND c.id = ANY($3::uuid[])`);

/**
 * The chests, the caller's active seed pair and their pity counters, read together without a
 * lock: the opening's write (recordOpenings) proceeds only if the pair's nonce is still the one
 * read here. Every opening of the player advances that nonce in the same statement as it moves
 * the counters, and a rotation retires the pair, so an unchanged nonce proves the counters and the
 * pair current. The pity group is the one the roll uses: the rules' `group`, else the type's slug.
 */
export async function readOpeningState(db: Queryable, appId: string, playerId: string, chestIds: string[]): Promise<OpeningState> {
  const r = await db.query<Row>(
    chestIds.length === 1 ? READ_ONE_CHEST_STATE.with([appId, playerId, chestIds[0]]) : READ_CHESTS_STATE.with([appId, playerId, chestIds]),
  );
  const counters = new Map<string, number>();
  for (const row of r.rows) if (row.pity_group !== null && row.opens_since !== null) counters.set(row.pity_group, row.opens_since);
  return {
    chests: new Map(r.rows.map((row) => [row.id, toChest(row)])),
    seed: r.rows[0] && toSeed(r.rows[0]),
    counters,
  };
}

import { z } from 'zod';
import { OpenedItemSchema, OpeningPitySchema, OUTBOX_COLUMNS, outboxParams, type OpeningView, type OutboxMessage, type Queryable } from '@ccs/shared';

interface OpeningRow {
  id: string;
  chest_id: string;
  chest_type_id: string;
  opened_at: Date;
  items: unknown;
  experience: number;
  content_version: number;
  pity: unknown;
  nonce: number | null;
  server_seed_hash: string | null;
  client_seed: string | null;
}

const ItemsSchema = z.array(OpenedItemSchema);
// With the seed pair the opening used (a LEFT JOIN: openings made before fairness have none).
const COLUMNS = `o.id, o.chest_id, o.chest_type_id, o.opened_at, o.items, o.experience, o.content_version, o.pity, o.nonce,
  s.server_seed_hash, s.client_seed`;
const FROM = 'openings o LEFT JOIN player_seeds s ON s.id = o.seed_id';

const toView = (r: OpeningRow): OpeningView => ({
  openingId: r.id,
  chestId: r.chest_id,
  chestTypeId: r.chest_type_id,
  openedAt: r.opened_at.toISOString(),
  items: ItemsSchema.parse(r.items),
  experience: r.experience,
  rulesVersion: r.content_version,
  ...(r.pity ? { pity: OpeningPitySchema.parse(r.pity) } : {}),
  ...(r.server_seed_hash && r.client_seed !== null && r.nonce !== null
    ? { fairness: { serverSeedHash: r.server_seed_hash, clientSeed: r.client_seed, nonce: r.nonce } }
    : {}),
});

/** What an opening used besides its rules: its seed pair and nonce, and its pity rule's bound. */
export interface OpeningInputs {
  seedId: string;
  nonce: number;
  /** Present when the chest has pity: the counter row to write. */
  pityHard?: number;
}

/**
 * Step 1 of the opening saga as ONE atomic statement, no transaction around it:
 * - advances the seed pair's nonce only if it is still the nonce the roll used, the pair is still
 *   active and the chest still unopened (compare-and-set: the first UPDATE takes the pair's row
 *   lock, so a concurrent opening of the same player waits, then finds the nonce moved and writes
 *   nothing);
 * - then, only if it did: consumes the chest, records the opening, writes its grant to the outbox
 *   and stores the pity counter after it.
 * Returns whether the opening was recorded; when not, nothing was written (the caller reads the
 * state again: the chest was opened meanwhile, or the player's pair moved on).
 */
export async function recordOpening(
  db: Queryable,
  o: OpeningView & { appId: string; playerId: string; idempotencyKey?: string },
  inputs: OpeningInputs,
  grant: OutboxMessage,
): Promise<boolean> {
  const pity = o.pity;
  const r = await db.query<{ n: number }>(
    `WITH nonced AS (
       UPDATE player_seeds SET next_nonce = $16 + 1
        WHERE id = $15 AND next_nonce = $16 AND revealed_at IS NULL
          AND EXISTS (SELECT 1 FROM inventory_chests WHERE app_id = $2 AND id = $4 AND player_id = $3 AND opened_at IS NULL)
        RETURNING id
     ), consumed AS (
       UPDATE inventory_chests SET opened_at = $7
        WHERE app_id = $2 AND id = $4 AND player_id = $3 AND opened_at IS NULL AND EXISTS (SELECT 1 FROM nonced)
        RETURNING id
     ), recorded AS (
       INSERT INTO openings (id, app_id, player_id, chest_id, chest_type_id, content_version, opened_at, items, experience, idempotency_key,
                             seed_id, nonce, pity)
       SELECT $1, $2, $3, id, $5, $6, $7, $8, $9, $10, $15, $16, $17 FROM consumed
       RETURNING id
     ), announced AS (
       INSERT INTO outbox (${OUTBOX_COLUMNS}) SELECT $11, $12, $13, $14 FROM recorded
       RETURNING id
     ), pitied AS (
       INSERT INTO pity_counters (app_id, player_id, pity_group, opens_since, rarity, hard)
       SELECT $2, $3, $18, $19, $20, $21 FROM recorded WHERE $18::text IS NOT NULL
       ON CONFLICT (app_id, player_id, pity_group) DO UPDATE SET
         opens_since = EXCLUDED.opens_since, rarity = EXCLUDED.rarity, hard = EXCLUDED.hard, updated_at = now()
     )
     SELECT count(*)::int AS n FROM announced`,
    [
      o.openingId,
      o.appId,
      o.playerId,
      o.chestId,
      o.chestTypeId,
      o.rulesVersion,
      o.openedAt,
      JSON.stringify(o.items),
      o.experience,
      o.idempotencyKey ?? null,
      ...outboxParams(grant),
      inputs.seedId,
      inputs.nonce,
      pity ? JSON.stringify(pity) : null,
      pity?.group ?? null,
      pity?.opensSinceAfter ?? null,
      pity?.rarity ?? null,
      inputs.pityHard ?? null,
    ],
  );
  return r.rows[0]!.n === 1;
}

/** The opening a player made with an Idempotency-Key, if any. */
export async function findOpeningByKey(db: Queryable, appId: string, playerId: string, key: string): Promise<OpeningView | undefined> {
  const r = await db.query<OpeningRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE o.app_id = $1 AND o.player_id = $2 AND o.idempotency_key = $3`, [
    appId,
    playerId,
    key,
  ]);
  return r.rows[0] && toView(r.rows[0]);
}

/** One page of a player's openings, newest first, and their total. */
export async function listOpenings(
  db: Queryable,
  appId: string,
  playerId: string,
  page: { limit: number; offset: number },
): Promise<{ openings: OpeningView[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.query<OpeningRow>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE o.app_id = $1 AND o.player_id = $2
       ORDER BY o.opened_at DESC, o.id DESC LIMIT $3 OFFSET $4`,
      [appId, playerId, page.limit, page.offset],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM openings WHERE app_id = $1 AND player_id = $2', [appId, playerId]),
  ]);
  return { openings: rows.rows.map(toView), total: count.rows[0]!.n };
}

/** One of the player's openings by id, with the seed pair it used (undefined when not theirs). */
export async function findOpening(db: Queryable, appId: string, playerId: string, id: string) {
  const r = await db.query<OpeningRow & { seed_id: string | null }>(
    `SELECT ${COLUMNS}, o.seed_id FROM ${FROM} WHERE o.app_id = $1 AND o.player_id = $2 AND o.id = $3`,
    [appId, playerId, id],
  );
  const row = r.rows[0];
  return row && { view: toView(row), seedId: row.seed_id };
}

/** Openings of the player by id, in the order of `ids` (a keyed batch's replay). */
export async function listOpeningsByIds(db: Queryable, appId: string, playerId: string, ids: string[]): Promise<OpeningView[]> {
  const r = await db.query<OpeningRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE o.app_id = $1 AND o.player_id = $2 AND o.id = ANY($3::uuid[])`, [
    appId,
    playerId,
    ids,
  ]);
  const byId = new Map(r.rows.map((row) => [row.id, toView(row)]));
  return ids.map((id) => byId.get(id)).filter((o): o is OpeningView => o !== undefined);
}

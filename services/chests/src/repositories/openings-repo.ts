import { z } from 'zod';
import {
  OpenedItemSchema,
  OpeningBannerSchema,
  OpeningPitySchema,
  OUTBOX_COLUMNS,
  preparedStatement,
  type OpeningView,
  type OutboxMessage,
  type Queryable,
} from '@ccs/shared';

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
  banner: unknown;
}

const ItemsSchema = z.array(OpenedItemSchema);
// With the seed pair the opening used (a LEFT JOIN: openings made before fairness have none).
const COLUMNS = `o.id, o.chest_id, o.chest_type_id, o.opened_at, o.items, o.experience, o.content_version, o.pity, o.nonce,
  s.server_seed_hash, s.client_seed, o.banner`;
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
  ...(r.banner ? { banner: OpeningBannerSchema.parse(r.banner) } : {}),
});

/** Whose openings these are, the seed pair and first nonce they used, and the Idempotency-Key that made them. */
export interface OpeningsOwner {
  appId: string;
  playerId: string;
  seedId: string;
  /** The pair's nonce the first opening used; the others follow it, one each. */
  nonce: number;
  /** The request's Idempotency-Key, stored with its chests and openings in `opening_keys` under its kind (`opening_keys_pkey`). */
  key?: { kind: OpeningKind; value: string };
}

/** The scope an opening's Idempotency-Key was made in: a single open or a batch (a banner pull's opening is a batch). */
export type OpeningKind = 'one' | 'batch';

/** The unique index a second use of a stored opening key fails on. */
export const OPENING_KEY_INDEX = 'opening_keys_pkey';

/** A pity group's counter after the openings, with the rule that moved it. */
export interface PityCounter {
  group: string;
  opensSince: number;
  rarity: string;
  hard: number;
}

/** recordOpenings' one statement: $1 app, $2 player, $3 seed pair, $4 its nonce, $5 n, $6 chest ids, $7 openings, $8 the Idempotency-Key, $9 grants, $10 pity counters, $11 the key's kind, $12 opening ids. */
const RECORD_OPENINGS = preparedStatement(
  'chests_record_openings',
  `WITH nonced AS (
    UPDATE player_seeds SET next_nonce = $4::int + $5::int
     WHERE id = $3 AND app_id = $1 AND player_id = $2 AND next_nonce = $4::int AND revealed_at IS NULL
       AND (SELECT count(*) FROM (SELECT id FROM inventory_chests WHERE app_id = $1 AND player_id = $2 AND id = ANY($6::uuid[]) AND opened_at IS NULL
                                   ORDER BY id FOR UPDATE) unopened) = $5::int
     RETURNING id
  ), consumed AS (
    UPDATE inventory_chests c SET opened_at = r.opened_at
      FROM jsonb_to_recordset($7::jsonb) AS r(chest_id uuid, opened_at timestamptz)
     WHERE c.app_id = $1 AND c.player_id = $2 AND c.id = r.chest_id AND c.opened_at IS NULL AND EXISTS (SELECT 1 FROM nonced)
     RETURNING c.id
  ), recorded AS (
    INSERT INTO openings (id, app_id, player_id, chest_id, chest_type_id, content_version, opened_at, items, experience,
                          seed_id, nonce, pity, banner)
    SELECT r.id, $1, $2, r.chest_id, r.chest_type_id, r.content_version, r.opened_at, r.items, r.experience, $3, r.nonce, r.pity, r.banner
      FROM jsonb_to_recordset($7::jsonb) AS r(id uuid, chest_id uuid, chest_type_id uuid, content_version integer, opened_at timestamptz,
                                               items jsonb, experience integer, nonce integer, pity jsonb, banner jsonb)
     WHERE r.chest_id IN (SELECT id FROM consumed)
    RETURNING id
  ), announced AS (
    INSERT INTO outbox (${OUTBOX_COLUMNS})
    SELECT g.id, g.subject, g.payload, g.headers FROM jsonb_to_recordset($9::jsonb) AS g(id uuid, subject text, payload jsonb, headers jsonb)
     WHERE g.id IN (SELECT id FROM recorded)
    RETURNING id
  ), pitied AS (
    INSERT INTO pity_counters (app_id, player_id, pity_group, opens_since, rarity, hard)
    SELECT $1, $2, p.pity_group, p.opens_since, p.rarity, p.hard
      FROM jsonb_to_recordset($10::jsonb) AS p(pity_group text, opens_since integer, rarity text, hard integer)
     WHERE EXISTS (SELECT 1 FROM recorded)
    ON CONFLICT (app_id, player_id, pity_group) DO UPDATE SET
      opens_since = EXCLUDED.opens_since, rarity = EXCLUDED.rarity, hard = EXCLUDED.hard, updated_at = now()
  ), keyed AS (
    INSERT INTO opening_keys (app_id, player_id, kind, idempotency_key, chest_ids, opening_ids)
    SELECT $1, $2, $11::text, $8::text, $6::uuid[], $12::uuid[] WHERE $8::text IS NOT NULL AND EXISTS (SELECT 1 FROM recorded)
  )
  SELECT count(*)::int AS n FROM announced`,
);

/**
 * Step 1 of the opening saga for n chests (one for a single open) as ONE atomic statement, no
 * transaction around it:
 * - advances the seed pair's nonce from `owner.nonce` by n, only if it is still that nonce, the
 *   pair is still active and all n chests are still unopened (compare-and-set: the first UPDATE
 *   takes the pair's row lock, so a concurrent opening of the same player waits, then finds the
 *   nonce moved and writes nothing; every opening advances the nonce, so chests found unopened
 *   under an unchanged nonce are still unopened). The n chests are counted with their rows
 *   locked, in id order, as a store refund's revocation locks them before deleting them
 *   (docs/architecture.md "Store refunds"): a chest is either counted and consumed (the
 *   revocation waits, then finds it opened) or already gone and not counted. A count from the
 *   statement's snapshot alone could count a chest deleted before the consume, and write the
 *   nonce alone;
 * - then, only if it did: consumes the chests, records the openings, writes their grants to the
 *   outbox, stores each pity group's counter after them, and the request's Idempotency-Key.
 * Returns whether the openings were recorded; when not, nothing was written (the caller reads the
 * state again: a chest was opened meanwhile, or the player's pair moved on).
 */
export async function recordOpenings(
  db: Queryable,
  owner: OpeningsOwner,
  openings: OpeningView[],
  grants: OutboxMessage[],
  counters: PityCounter[],
): Promise<boolean> {
  const rows = openings.map((o) => ({
    id: o.openingId,
    chest_id: o.chestId,
    chest_type_id: o.chestTypeId,
    content_version: o.rulesVersion,
    opened_at: o.openedAt,
    items: o.items,
    experience: o.experience,
    nonce: o.fairness!.nonce,
    pity: o.pity ?? null,
    banner: o.banner ?? null,
  }));
  const pity = counters.map((c) => ({ pity_group: c.group, opens_since: c.opensSince, rarity: c.rarity, hard: c.hard }));
  const r = await db.query<{ n: number }>(
    RECORD_OPENINGS.with([
      owner.appId,
      owner.playerId,
      owner.seedId,
      owner.nonce,
      openings.length,
      openings.map((o) => o.chestId),
      JSON.stringify(rows),
      owner.key?.value ?? null,
      JSON.stringify(grants),
      JSON.stringify(pity),
      owner.key?.kind ?? null,
      openings.map((o) => o.openingId),
    ]),
  );
  return r.rows[0]!.n === openings.length;
}

/** The chests (in order) and openings an Idempotency-Key of this kind opened, if any. */
export async function findOpeningKey(
  db: Queryable,
  appId: string,
  playerId: string,
  key: { kind: OpeningKind; value: string },
): Promise<{ chestIds: string[]; openingIds: string[] } | undefined> {
  const r = await db.query<{ chest_ids: string[]; opening_ids: string[] }>(
    'SELECT chest_ids, opening_ids FROM opening_keys WHERE app_id = $1 AND player_id = $2 AND kind = $3 AND idempotency_key = $4',
    [appId, playerId, key.kind, key.value],
  );
  return r.rows[0] && { chestIds: r.rows[0].chest_ids, openingIds: r.rows[0].opening_ids };
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

/** Openings of the player by id, in the order of `ids` (a keyed opening's replay). */
export async function listOpeningsByIds(db: Queryable, appId: string, playerId: string, ids: string[]): Promise<OpeningView[]> {
  const r = await db.query<OpeningRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE o.app_id = $1 AND o.player_id = $2 AND o.id = ANY($3::uuid[])`, [
    appId,
    playerId,
    ids,
  ]);
  const byId = new Map(r.rows.map((row) => [row.id, toView(row)]));
  return ids.map((id) => byId.get(id)).filter((o): o is OpeningView => o !== undefined);
}

/**
 * Sets banner openings' recorded `sparkPointsAfter` (their `banner` record), in the openings'
 * transaction: the points as the standing stored them, when a spark exchange took some between
 * the roll's read and the write (see storeBannerStandings).
 */
export async function recordSparkPointsAfter(db: Queryable, appId: string, points: { openingId: string; sparkPointsAfter: number }[]): Promise<void> {
  await db.query(
    `UPDATE openings o SET banner = jsonb_set(o.banner, '{sparkPointsAfter}', to_jsonb(x.points))
       FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, points integer)
      WHERE o.app_id = $1 AND o.id = x.id AND o.banner IS NOT NULL`,
    [appId, JSON.stringify(points.map((p) => ({ id: p.openingId, points: p.sparkPointsAfter })))],
  );
}

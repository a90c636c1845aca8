import { preparedStatement, type ConvertedSlot, type Queryable } from '@ccs/shared';
import { holdingKey } from '../duplicates/judge.js';

/** What collections knows of the duplicate rules a grant must be judged by. */
export interface RulesRow {
  appId: string;
  /** The version asked for (null: the app's current one). */
  asked: number | null;
  /** The app's current content version here (null: no content of the app arrived yet). */
  current: number | null;
  /** Whether the version's rules are stored (`rules` null then means: keep every copy). */
  known: boolean;
  rules: unknown;
}

/** The stored duplicate rules of (app, version) pairs, a null version meaning the app's current one. */
export async function readRules(q: Queryable, pairs: { appId: string; version: number | null }[]): Promise<RulesRow[]> {
  const r = await q.query<{ app_id: string; asked: number | null; current: number | null; known: boolean; rules: unknown }>(
    `SELECT x.a AS app_id, x.v AS asked, a.content_version AS current, r.app_id IS NOT NULL AS known, r.rules
       FROM jsonb_to_recordset($1::jsonb) AS x(a uuid, v integer)
       LEFT JOIN apps a ON a.app_id = x.a
       LEFT JOIN duplicate_rules r ON r.app_id = x.a AND r.content_version = coalesce(x.v, a.content_version)`,
    [JSON.stringify(pairs.map((p) => ({ a: p.appId, v: p.version })))],
  );
  return r.rows.map((row) => ({ appId: row.app_id, asked: row.asked, current: row.current, known: row.known, rules: row.rules }));
}

// First key of the two-key advisory locks of grants ('coll'): its own space, apart from any other lock.
const LOCK_SPACE = 0x636f6c6c;

const LOCK_HOLDINGS = preparedStatement(
  'collections_lock_holdings',
  `SELECT pg_advisory_xact_lock($2, h)
       FROM (SELECT DISTINCT hashtext(x.a || ':' || x.p || ':' || x.c) AS h FROM jsonb_to_recordset($1::jsonb) AS x(a text, p text, c text)) k
      ORDER BY h`,
);

/**
 * Serialises, until the caller's transaction ends, every grant that touches one of these
 * (app, player, collectible) holdings: one transaction-scoped advisory lock each, taken in the
 * order of their ids, so two batches never wait on each other in a cycle. Advisory rather than
 * row locks because a collectible the player never held has no row to lock yet. Two holdings
 * whose hashes collide share a lock, which only serialises them.
 */
export async function lockHoldings(tx: Queryable, holdings: { appId: string; playerId: string; collectibleId: string }[]): Promise<void> {
  await tx.query(LOCK_HOLDINGS.with([JSON.stringify(holdings.map((h) => ({ a: h.appId, p: h.playerId, c: h.collectibleId }))), LOCK_SPACE]));
}

/**
 * Read under the holdings' locks, in one statement: the copies the players hold of these
 * collectibles, and the granted rows already stored for these openings (a re-delivered grant)
 * with what each was converted into.
 */
export async function readHoldings(
  tx: Queryable,
  holdings: { appId: string; playerId: string; collectibleId: string }[],
  openingIds: string[],
): Promise<{ held: Map<string, number>; stored: Map<string, ConvertedSlot[]> }> {
  const r = await tx.query<{ held: [string, string, string, number][]; stored: [string, number, string | null, number | null][] }>(
    // Unnamed on purpose: its cached generic plan read 3 times the blocks of the custom one and
    // took 3.8 ms a call instead of 2.1 (docs/performance.md, "Named statements").
    `WITH k AS (SELECT DISTINCT a, p, c FROM jsonb_to_recordset($1::jsonb) AS x(a uuid, p uuid, c text))
       SELECT (SELECT coalesce(jsonb_agg(jsonb_build_array(pc.app_id, pc.player_id, pc.collectible_id, pc.copies)), '[]'::jsonb)
                 FROM k JOIN player_collectibles pc ON pc.app_id = k.a AND pc.player_id = k.p AND pc.collectible_id = k.c) AS held,
              (SELECT coalesce(jsonb_agg(jsonb_build_array(o.opening_id, o.slot, o.converted_currency, o.converted_amount) ORDER BY o.opening_id, o.slot), '[]'::jsonb)
                 FROM owned_collectibles o WHERE o.opening_id = ANY($2::uuid[])) AS stored`,
    [JSON.stringify(holdings.map((h) => ({ a: h.appId, p: h.playerId, c: h.collectibleId }))), openingIds],
  );
  const row = r.rows[0]!;
  const held = new Map(row.held.map(([a, p, c, n]) => [holdingKey(a, p, c), n]));
  const stored = new Map<string, ConvertedSlot[]>();
  for (const [opening, slot, currency, amount] of row.stored) {
    const list = stored.get(opening) ?? [];
    if (currency !== null) list.push({ slot, currency, amount: amount ?? 0 });
    stored.set(opening, list);
  }
  return { held, stored };
}

/**
 * The converted slots of each of these openings of the app that collections has applied (every
 * applied opening has one row per slot); openings not applied yet are absent. One index range
 * per opening (the primary key).
 */
export async function conversionsOf(q: Queryable, appId: string, openingIds: string[]): Promise<Map<string, ConvertedSlot[]>> {
  const r = await q.query<{ opening_id: string; converted: ConvertedSlot[] }>(
    `SELECT opening_id,
            coalesce(jsonb_agg(jsonb_build_object('slot', slot, 'currency', converted_currency, 'amount', converted_amount) ORDER BY slot)
                     FILTER (WHERE converted_currency IS NOT NULL), '[]'::jsonb) AS converted
       FROM owned_collectibles WHERE opening_id = ANY($2::uuid[]) AND app_id = $1
      GROUP BY opening_id`,
    [appId, openingIds],
  );
  return new Map(r.rows.map((row) => [row.opening_id, row.converted]));
}

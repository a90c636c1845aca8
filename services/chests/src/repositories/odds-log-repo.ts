import { oddsLogRecord, type Queryable } from '@ccs/shared';
import { subjectKey } from '../fairness/odds-log.js';

/** One entry of an app's odds log, as stored and served: a chest type's rules or a banner's (exactly one of the two ids). */
export interface OddsLogEntry {
  seq: number;
  chestTypeId?: string;
  /** A banner entry's banner (its slug). */
  bannerId?: string;
  rulesVersion: number;
  rulesSha256: string;
  /** ISO 8601 UTC with milliseconds: the exact string the entry's hash covers. */
  effectiveAt: string;
  previousHash: string;
  entryHash: string;
}

interface Row {
  seq: number;
  chest_type_id: string | null;
  banner_id: string | null;
  rules_version: number;
  rules_sha256: string;
  effective_at: Date;
  previous_hash: string;
  entry_hash: string;
}

const toEntry = (r: Row): OddsLogEntry => ({
  seq: r.seq,
  ...(r.banner_id !== null ? { bannerId: r.banner_id } : { chestTypeId: r.chest_type_id! }),
  rulesVersion: r.rules_version,
  rulesSha256: r.rules_sha256,
  effectiveAt: r.effective_at.toISOString(),
  previousHash: r.previous_hash,
  entryHash: r.entry_hash,
});

const COLUMNS = 'seq, chest_type_id, banner_id, rules_version, rules_sha256, effective_at, previous_hash, entry_hash';

/** The app's last entry (the chain's head) and each subject's last logged rules hash, by subjectKey. */
export async function oddsLogHead(tx: Queryable, appId: string): Promise<{ last?: OddsLogEntry; rulesOf: Map<string, string> }> {
  const [last, latest] = await Promise.all([
    tx.query<Row>(`SELECT ${COLUMNS} FROM odds_log WHERE app_id = $1 ORDER BY seq DESC LIMIT 1`, [appId]),
    tx.query<{ chest_type_id: string | null; banner_id: string | null; rules_sha256: string }>(
      `SELECT DISTINCT ON (chest_type_id, banner_id) chest_type_id, banner_id, rules_sha256 FROM odds_log WHERE app_id = $1
        ORDER BY chest_type_id, banner_id, seq DESC`,
      [appId],
    ),
  ]);
  return {
    ...(last.rows[0] ? { last: toEntry(last.rows[0]) } : {}),
    rulesOf: new Map(
      latest.rows.map((r) => [subjectKey(r.banner_id !== null ? { bannerId: r.banner_id } : { chestTypeId: r.chest_type_id! }), r.rules_sha256]),
    ),
  };
}

/** Appends entries (in the caller's transaction, which holds the app's row lock: one writer per app). */
export async function appendOddsLog(tx: Queryable, appId: string, entries: OddsLogEntry[]): Promise<void> {
  if (!entries.length) return;
  await tx.query(
    `INSERT INTO odds_log (app_id, seq, chest_type_id, banner_id, rules_version, rules_sha256, effective_at, previous_hash, entry_hash)
     SELECT $1, e.seq, e.chest_type_id, e.banner_id, e.rules_version, e.rules_sha256, e.effective_at, e.previous_hash, e.entry_hash
       FROM jsonb_to_recordset($2::jsonb) AS e(seq integer, chest_type_id uuid, banner_id text, rules_version integer, rules_sha256 text,
                                                effective_at timestamptz, previous_hash text, entry_hash text)`,
    [appId, JSON.stringify(entries.map(oddsLogRecord))],
  );
}

/**
 * One page of the app's odds log, oldest first, and its length, read in one statement (one
 * snapshot): read apart, a load committing between them gave a length that counted entries the
 * page did not show yet.
 */
export async function listOddsLog(
  db: Queryable,
  appId: string,
  page: { limit: number; offset: number },
): Promise<{ entries: OddsLogEntry[]; total: number }> {
  const rows = await db.query<Row & { total: number }>(
    `SELECT ${COLUMNS}, (SELECT count(*)::int FROM odds_log WHERE app_id = $1) AS total
       FROM odds_log WHERE app_id = $1 ORDER BY seq LIMIT $2 OFFSET $3`,
    [appId, page.limit, page.offset],
  );
  let total = rows.rows[0]?.total;
  if (total === undefined) {
    // A page past the end has no row to carry the length: count apart.
    const count = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM odds_log WHERE app_id = $1', [appId]);
    total = count.rows[0]!.n;
  }
  return { entries: rows.rows.map(toEntry), total };
}

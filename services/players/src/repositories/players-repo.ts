import { preparedStatement, type PlayerView, type Privacy, type Queryable } from '@ccs/shared';

/** A player row as the service uses it (credentials included; never sent out as is). */
export interface PlayerRecord {
  id: string;
  appId: string;
  email: string | null;
  passwordHash: string | null;
  isAnonymous: boolean;
  privacy: Privacy;
  experience: number;
  starterChestId: string;
  /** Self-declared compliance attributes (personal data: never logged). */
  country: string | null;
  birthYear: number | null;
  createdAt: Date;
  /** When the studio locked the player; null while not locked. */
  lockedAt: Date | null;
}

interface PlayerRow {
  id: string;
  app_id: string;
  email: string | null;
  password_hash: string | null;
  is_anonymous: boolean;
  privacy: Privacy;
  experience: number;
  starter_chest_id: string;
  country: string | null;
  birth_year: number | null;
  created_at: Date;
  locked_at: Date | null;
}

const COLUMNS = `id, app_id, email, password_hash, is_anonymous, privacy, experience::float8 AS experience,
  starter_chest_id, country, birth_year, created_at, locked_at`;

function toRecord(r: PlayerRow): PlayerRecord {
  return {
    id: r.id,
    appId: r.app_id,
    email: r.email,
    passwordHash: r.password_hash,
    isAnonymous: r.is_anonymous,
    privacy: r.privacy,
    experience: r.experience,
    starterChestId: r.starter_chest_id,
    country: r.country,
    birthYear: r.birth_year,
    createdAt: r.created_at,
    lockedAt: r.locked_at,
  };
}

/** The player as the player itself sees it. */
export function toView(p: PlayerRecord): PlayerView {
  return {
    id: p.id,
    email: p.email,
    isAnonymous: p.isAnonymous,
    privacy: p.privacy,
    experience: p.experience,
    country: p.country,
    birthYear: p.birthYear,
    createdAt: p.createdAt.toISOString(),
  };
}

/** The compliance attributes a write may set (validated and normalised beforehand); absent ones stay as they are. */
export interface ComplianceAttributes {
  country?: string;
  birthYear?: number;
}

/** Inserts a player: registered (email and hash) or anonymous (neither), with the attributes given. */
export async function insertPlayer(
  tx: Queryable,
  p: { id: string; appId: string; email: string | null; passwordHash: string | null; starterChestId: string } & ComplianceAttributes,
): Promise<PlayerRecord> {
  const { rows } = await tx.query<PlayerRow>(
    `INSERT INTO players (id, app_id, email, password_hash, is_anonymous, starter_chest_id, registered_at, country, birth_year)
     VALUES ($1, $2, $3, $4, $3::text IS NULL, $5, CASE WHEN $3::text IS NULL THEN NULL ELSE now() END, $6, $7)
     RETURNING ${COLUMNS}`,
    [p.id, p.appId, p.email, p.passwordHash, p.starterChestId, p.country ?? null, p.birthYear ?? null],
  );
  return toRecord(rows[0]!);
}

/** A player of the app by id (`forUpdate` locks the row for the transaction). */
export async function findPlayer(q: Queryable, appId: string, id: string, forUpdate = false): Promise<PlayerRecord | undefined> {
  const { rows } = await q.query<PlayerRow>(`SELECT ${COLUMNS} FROM players WHERE app_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [
    appId,
    id,
  ]);
  return rows[0] && toRecord(rows[0]);
}

/** A registered player of the app by email, whatever its case. */
export async function findPlayerByEmail(q: Queryable, appId: string, email: string): Promise<PlayerRecord | undefined> {
  const { rows } = await q.query<PlayerRow>(`SELECT ${COLUMNS} FROM players WHERE app_id = $1 AND lower(email) = lower($2)`, [appId, email]);
  return rows[0] && toRecord(rows[0]);
}

/**
 * Turns an anonymous player into a registered one; undefined when it is not (or no longer)
 * anonymous. Its declared profile changes beforehand, by the rules of profile/declared-profile.ts.
 */
export async function upgradeToRegistered(
  tx: Queryable,
  appId: string,
  id: string,
  credentials: { email: string; passwordHash: string },
): Promise<PlayerRecord | undefined> {
  const { rows } = await tx.query<PlayerRow>(
    `UPDATE players SET email = $3, password_hash = $4, is_anonymous = false, registered_at = now()
     WHERE app_id = $1 AND id = $2 AND is_anonymous RETURNING ${COLUMNS}`,
    [appId, id, credentials.email, credentials.passwordHash],
  );
  return rows[0] && toRecord(rows[0]);
}

/**
 * Sets the privacy given and returns the player; undefined when the player is not in the app. The
 * declared country and birth year change through profile/declared-profile.ts, by its rules.
 */
export async function updateSettings(q: Queryable, appId: string, id: string, s: { privacy?: Privacy }): Promise<PlayerRecord | undefined> {
  const { rows } = await q.query<PlayerRow>(`UPDATE players SET privacy = COALESCE($3, privacy) WHERE app_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
    appId,
    id,
    s.privacy ?? null,
  ]);
  return rows[0] && toRecord(rows[0]);
}

const ADD_EXPERIENCE = preparedStatement(
  'players_add_experience',
  `UPDATE players p SET experience = p.experience + g.xp
       FROM (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS t(app_id, id, xp)) g
      WHERE p.app_id = g.app_id AND p.id = g.id
      RETURNING p.id`,
);

/**
 * Adds experience to players, one row per (app, player) given, in the order given (callers sort,
 * so concurrent batches lock players in the same order). Returns the ids of the players found.
 */
export async function addExperience(tx: Queryable, gains: { appId: string; playerId: string; xp: number }[]): Promise<Set<string>> {
  const r = await tx.query<{ id: string }>(ADD_EXPERIENCE.with([gains.map((g) => g.appId), gains.map((g) => g.playerId), gains.map((g) => g.xp)]));
  return new Set(r.rows.map((row) => row.id));
}

/** A player of a list: who they are and whether the studio locked them. */
export interface PlayerSummary {
  id: string;
  email: string | null;
  isAnonymous: boolean;
  createdAt: Date;
  lockedAt: Date | null;
}

/** `%`, `_` and `\` of a LIKE pattern, escaped: the prefix matches as typed. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A page of the app's players whose email starts with `emailPrefix` in any case (by email), or,
 * without one, the newest first; and how many match in all. The prefix search uses the index on
 * (app_id, lower(email) text_pattern_ops).
 */
export async function searchPlayers(
  q: Queryable,
  appId: string,
  emailPrefix: string | undefined,
  page: { limit: number; offset: number },
): Promise<{ players: PlayerSummary[]; total: number }> {
  const where = emailPrefix === undefined ? 'app_id = $1' : `app_id = $1 AND email IS NOT NULL AND lower(email) LIKE $2 || '%'`;
  const params: unknown[] = emailPrefix === undefined ? [appId] : [appId, likeLiteral(emailPrefix.toLowerCase())];
  const order = emailPrefix === undefined ? 'created_at DESC, id DESC' : 'lower(email), id';
  const [rows, count] = await Promise.all([
    q.query<{ id: string; email: string | null; is_anonymous: boolean; created_at: Date; locked_at: Date | null }>(
      `SELECT id, email, is_anonymous, created_at, locked_at FROM players WHERE ${where}
        ORDER BY ${order} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM players WHERE ${where}`, params),
  ]);
  return {
    players: rows.rows.map((r) => ({ id: r.id, email: r.email, isAnonymous: r.is_anonymous, createdAt: r.created_at, lockedAt: r.locked_at })),
    total: count.rows[0]!.n,
  };
}

/**
 * Locks (`locked`) or unlocks a player of the app; undefined when the app has no such player.
 * `changed` is false when the player already was so (a lock keeps its first time).
 */
export async function setPlayerLock(
  tx: Queryable,
  appId: string,
  playerId: string,
  locked: boolean,
): Promise<{ lockedAt: Date | null; changed: boolean } | undefined> {
  const { rows } = await tx.query<{ locked_at: Date | null; was_locked: boolean }>(
    `UPDATE players p SET locked_at = CASE WHEN $3 THEN coalesce(p.locked_at, now()) ELSE NULL END
       FROM (SELECT id, locked_at IS NOT NULL AS was_locked FROM players WHERE app_id = $1 AND id = $2 FOR UPDATE) before
      WHERE p.app_id = $1 AND p.id = before.id
      RETURNING p.locked_at, before.was_locked`,
    [appId, playerId, locked],
  );
  const r = rows[0];
  return r && { lockedAt: r.locked_at, changed: r.was_locked !== locked };
}

/** Whether the player of the app is locked (false when there is no such player: their token is refused elsewhere). */
export async function isPlayerLocked(q: Queryable, appId: string, playerId: string): Promise<boolean> {
  const { rows } = await q.query<{ locked: boolean }>('SELECT locked_at IS NOT NULL AS locked FROM players WHERE app_id = $1 AND id = $2', [
    appId,
    playerId,
  ]);
  return rows[0]?.locked ?? false;
}

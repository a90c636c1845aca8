import { randomUUID } from 'node:crypto';
import type { Queryable } from '@ccs/shared';
import { newSecret, secretHash } from '../credentials/secrets.js';

/** A stored refresh token (its hash only). */
export interface RefreshTokenRecord {
  id: string;
  playerId: string;
  familyId: string;
  expiresAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
  /** The token this one was rotated into (null before rotation, and for tokens rotated before 0004). */
  replacedBy: string | null;
}

/** Issues a refresh token in a family (a new family per login); returns the raw token, shown once. */
export async function insertRefreshToken(
  tx: Queryable,
  t: { appId: string; playerId: string; familyId: string; ttlSeconds: number; id?: string },
): Promise<string> {
  const raw = newSecret('rt');
  await tx.query(
    `INSERT INTO refresh_tokens (id, app_id, player_id, family_id, token_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [t.id ?? randomUUID(), t.appId, t.playerId, t.familyId, secretHash(raw), t.ttlSeconds],
  );
  return raw;
}

/**
 * Finds a refresh token of the app by its raw value (or, with `by: 'id'`, by its id) and locks
 * it, so one use wins a race.
 */
export async function lockRefreshToken(
  tx: Queryable,
  appId: string,
  raw: string,
  by: 'token' | 'id' = 'token',
): Promise<RefreshTokenRecord | undefined> {
  const { rows } = await tx.query<{
    id: string;
    player_id: string;
    family_id: string;
    expires_at: Date;
    rotated_at: Date | null;
    revoked_at: Date | null;
    replaced_by: string | null;
  }>(
    `SELECT id, player_id, family_id, expires_at, rotated_at, revoked_at, replaced_by FROM refresh_tokens
     WHERE app_id = $1 AND ${by === 'token' ? 'token_hash = $2' : 'id = $2'} FOR UPDATE`,
    [appId, by === 'token' ? secretHash(raw) : raw],
  );
  const r = rows[0];
  return (
    r && {
      id: r.id,
      playerId: r.player_id,
      familyId: r.family_id,
      expiresAt: r.expires_at,
      rotatedAt: r.rotated_at,
      revokedAt: r.revoked_at,
      replacedBy: r.replaced_by,
    }
  );
}

/**
 * Marks a token as used and names its successor: presenting it again is reuse, unless it is the
 * retry of a refresh whose answer was lost (see refresh.ts). Rotating it again (such a retry)
 * keeps the first rotation time, so the grace window never stretches.
 */
export async function markRotated(tx: Queryable, appId: string, id: string, replacedBy: string): Promise<void> {
  await tx.query('UPDATE refresh_tokens SET rotated_at = coalesce(rotated_at, now()), replaced_by = $3 WHERE app_id = $1 AND id = $2', [
    appId,
    id,
    replacedBy,
  ]);
}

/** Revokes one token (a successor whose answer was lost and which is now replaced). */
export async function revokeToken(tx: Queryable, appId: string, id: string): Promise<void> {
  await tx.query('UPDATE refresh_tokens SET revoked_at = now() WHERE app_id = $1 AND id = $2 AND revoked_at IS NULL', [appId, id]);
}

/** Revokes every live token of the player's families; returns how many families had live tokens. */
export async function revokeFamilies(q: Queryable, appId: string, playerId: string, familyIds: string[]): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH revoked AS (
       UPDATE refresh_tokens SET revoked_at = now()
       WHERE app_id = $1 AND player_id = $2 AND family_id = ANY($3::uuid[]) AND revoked_at IS NULL
       RETURNING family_id)
     SELECT count(DISTINCT family_id)::int AS n FROM revoked`,
    [appId, playerId, familyIds],
  );
  return rows[0]?.n ?? 0;
}

/** The family of one of the player's refresh tokens (by raw value), if it is theirs. */
export async function familyOfToken(q: Queryable, appId: string, playerId: string, raw: string): Promise<string | undefined> {
  const { rows } = await q.query<{ family_id: string }>(
    'SELECT family_id FROM refresh_tokens WHERE app_id = $1 AND player_id = $2 AND token_hash = $3',
    [appId, playerId, secretHash(raw)],
  );
  return rows[0]?.family_id;
}

/** One refresh-token family of a player, as the studio's support sees it. */
export interface SessionRecord {
  familyId: string;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
  active: boolean;
  revokedAt: Date | null;
}

/**
 * The player's sessions (refresh-token families), the newest first, at most `limit`; how many
 * there are and how many are active (a token of the family still works: not revoked, not
 * rotated, not expired).
 */
export async function listSessions(
  q: Queryable,
  appId: string,
  playerId: string,
  limit: number,
): Promise<{ sessions: SessionRecord[]; total: number; active: number }> {
  const { rows } = await q.query<{
    family_id: string;
    created_at: Date;
    last_used_at: Date;
    expires_at: Date;
    active: boolean;
    revoked_at: Date | null;
    total: number;
    active_total: number;
  }>(
    `WITH families AS (
       SELECT family_id, min(created_at) AS created_at, max(created_at) AS last_used_at, max(expires_at) AS expires_at,
              bool_or(revoked_at IS NULL AND rotated_at IS NULL AND expires_at > now()) AS active, max(revoked_at) AS revoked_at
         FROM refresh_tokens WHERE app_id = $1 AND player_id = $2 GROUP BY family_id)
     SELECT f.*, count(*) OVER ()::int AS total, (count(*) FILTER (WHERE f.active) OVER ())::int AS active_total
       FROM families f ORDER BY f.last_used_at DESC, f.family_id LIMIT $3`,
    [appId, playerId, limit],
  );
  return {
    sessions: rows.map((r) => ({
      familyId: r.family_id,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
      expiresAt: r.expires_at,
      active: r.active,
      revokedAt: r.active ? null : r.revoked_at,
    })),
    total: rows[0]?.total ?? 0,
    active: rows[0]?.active_total ?? 0,
  };
}

/** Revokes every token of the player not revoked yet; returns how many families had a live one (an active session). */
export async function revokeAllFamilies(q: Queryable, appId: string, playerId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH revoked AS (
       UPDATE refresh_tokens SET revoked_at = now()
       WHERE app_id = $1 AND player_id = $2 AND revoked_at IS NULL
       RETURNING family_id, rotated_at IS NULL AND expires_at > now() AS live)
     SELECT count(DISTINCT family_id) FILTER (WHERE live)::int AS n FROM revoked`,
    [appId, playerId],
  );
  return rows[0]?.n ?? 0;
}

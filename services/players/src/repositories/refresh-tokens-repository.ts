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
}

/** Issues a refresh token in a family (a new family per login); returns the raw token, shown once. */
export async function insertRefreshToken(
  tx: Queryable,
  t: { appId: string; playerId: string; familyId: string; ttlSeconds: number },
): Promise<string> {
  const raw = newSecret('rt');
  await tx.query(
    `INSERT INTO refresh_tokens (id, app_id, player_id, family_id, token_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [randomUUID(), t.appId, t.playerId, t.familyId, secretHash(raw), t.ttlSeconds],
  );
  return raw;
}

/** Finds a refresh token of the app by its raw value and locks it, so one use wins a race. */
export async function lockRefreshToken(tx: Queryable, appId: string, raw: string): Promise<RefreshTokenRecord | undefined> {
  const { rows } = await tx.query<{
    id: string;
    player_id: string;
    family_id: string;
    expires_at: Date;
    rotated_at: Date | null;
    revoked_at: Date | null;
  }>(
    `SELECT id, player_id, family_id, expires_at, rotated_at, revoked_at FROM refresh_tokens
     WHERE app_id = $1 AND token_hash = $2 FOR UPDATE`,
    [appId, secretHash(raw)],
  );
  const r = rows[0];
  return (
    r && { id: r.id, playerId: r.player_id, familyId: r.family_id, expiresAt: r.expires_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at }
  );
}

/** Marks a token as used: presenting it again is reuse. */
export async function markRotated(tx: Queryable, appId: string, id: string): Promise<void> {
  await tx.query('UPDATE refresh_tokens SET rotated_at = now() WHERE app_id = $1 AND id = $2', [appId, id]);
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

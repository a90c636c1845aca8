import { randomUUID } from 'node:crypto';
import type { Queryable } from '@ccs/shared';
import { secretHash } from '../credentials/secrets.js';

/** Who may use a key: game clients (publishable) or the studio's servers (secret). */
export type KeyKind = 'publishable' | 'secret';

/** Stores a key of an app (hashed; the raw key is never kept); returns its row id. */
export async function insertApiKey(tx: Queryable, appId: string, kind: KeyKind, rawKey: string): Promise<string> {
  const id = randomUUID();
  await tx.query('INSERT INTO api_keys (id, app_id, kind, key_hash) VALUES ($1, $2, $3, $4)', [id, appId, kind, secretHash(rawKey)]);
  return id;
}

/** The app and kind of a live key: never revoked, or revoked in the future (a rotation's grace period). */
export async function resolveApiKey(q: Queryable, rawKey: string): Promise<{ appId: string; keyKind: KeyKind } | undefined> {
  const { rows } = await q.query<{ app_id: string; kind: KeyKind }>(
    'SELECT app_id, kind FROM api_keys WHERE key_hash = $1 AND (revoked_at IS NULL OR revoked_at > now())',
    [secretHash(rawKey)],
  );
  return rows[0] && { appId: rows[0].app_id, keyKind: rows[0].kind };
}

/** Stops the given raw keys at once, whichever app holds them; returns how many were live. */
export async function revokeRawKeys(tx: Queryable, rawKeys: readonly string[]): Promise<number> {
  const { rowCount } = await tx.query(
    'UPDATE api_keys SET revoked_at = now() WHERE key_hash = ANY($1) AND (revoked_at IS NULL OR revoked_at > now())',
    [rawKeys.map(secretHash)],
  );
  return rowCount ?? 0;
}

/** Whether a key is stored at all (for any app, revoked or not). */
export async function apiKeyExists(q: Queryable, rawKey: string): Promise<boolean> {
  const { rowCount } = await q.query('SELECT 1 FROM api_keys WHERE key_hash = $1', [secretHash(rawKey)]);
  return (rowCount ?? 0) > 0;
}

/**
 * Schedules every live key of one kind of an app to stop working `graceSeconds` from now (0: at
 * once). A key already due to stop earlier keeps its earlier time. Returns the keys it retired.
 */
export async function retireApiKeys(
  tx: Queryable,
  appId: string,
  kind: KeyKind,
  graceSeconds: number,
): Promise<{ kind: KeyKind; createdAt: string; revokedAt: string }[]> {
  const { rows } = await tx.query<{ kind: KeyKind; created_at: Date; revoked_at: Date }>(
    `UPDATE api_keys SET revoked_at = LEAST(coalesce(revoked_at, 'infinity'::timestamptz), now() + make_interval(secs => $3))
     WHERE app_id = $1 AND kind = $2 AND (revoked_at IS NULL OR revoked_at > now())
     RETURNING kind, created_at, revoked_at`,
    [appId, kind, graceSeconds],
  );
  return rows.map((r) => ({ kind: r.kind, createdAt: r.created_at.toISOString(), revokedAt: r.revoked_at.toISOString() }));
}

/** The kinds of the live keys of an app. */
export async function liveKeyKinds(q: Queryable, appId: string): Promise<KeyKind[]> {
  const { rows } = await q.query<{ kind: KeyKind }>(
    'SELECT DISTINCT kind FROM api_keys WHERE app_id = $1 AND (revoked_at IS NULL OR revoked_at > now()) ORDER BY kind',
    [appId],
  );
  return rows.map((r) => r.kind);
}

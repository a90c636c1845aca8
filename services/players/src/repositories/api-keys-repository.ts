import { randomUUID } from 'node:crypto';
import type { Queryable } from '@ccs/shared';
import { secretHash } from '../credentials/secrets.js';

/** Who may use a key: game clients (publishable) or the studio's servers (secret). */
export type KeyKind = 'publishable' | 'secret';

/** Stores a key of an app (hashed; the raw key is never kept). */
export async function insertApiKey(tx: Queryable, appId: string, kind: KeyKind, rawKey: string): Promise<void> {
  await tx.query('INSERT INTO api_keys (id, app_id, kind, key_hash) VALUES ($1, $2, $3, $4)', [
    randomUUID(),
    appId,
    kind,
    secretHash(rawKey),
  ]);
}

/** The app and kind of a live (unrevoked) key. */
export async function resolveApiKey(q: Queryable, rawKey: string): Promise<{ appId: string; keyKind: KeyKind } | undefined> {
  const { rows } = await q.query<{ app_id: string; kind: KeyKind }>(
    'SELECT app_id, kind FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    [secretHash(rawKey)],
  );
  return rows[0] && { appId: rows[0].app_id, keyKind: rows[0].kind };
}

/** Whether a key is stored at all (for any app, revoked or not). */
export async function apiKeyExists(q: Queryable, rawKey: string): Promise<boolean> {
  const { rowCount } = await q.query('SELECT 1 FROM api_keys WHERE key_hash = $1', [secretHash(rawKey)]);
  return (rowCount ?? 0) > 0;
}

import { SessionGrantsSchema, type Queryable } from '@ccs/shared';
import type { z } from 'zod';

type SessionGrants = z.infer<typeof SessionGrantsSchema>;

/** A guest created with an Idempotency-Key, as its retry is answered. */
export interface GuestKeyRecord {
  playerId: string;
  /** What the first answer reported. */
  grants: SessionGrants;
}

/** The guest created with this key within the last `ttlHours`, if any (older ones are forgotten). */
export async function findGuestKey(q: Queryable, appId: string, key: string, ttlHours: number): Promise<GuestKeyRecord | undefined> {
  const { rows } = await q.query<{ player_id: string; grants: unknown }>(
    `SELECT player_id, grants FROM guest_keys
     WHERE app_id = $1 AND key = $2 AND created_at >= now() - make_interval(hours => $3)`,
    [appId, key, ttlHours],
  );
  const r = rows[0];
  return r && { playerId: r.player_id, grants: SessionGrantsSchema.parse(r.grants) };
}

/**
 * Records the key with the guest, in its transaction. A forgotten row of the same key (past
 * `ttlHours`, not swept yet) is replaced; a live one makes the INSERT fail on `guest_keys_pkey`
 * (a concurrent creation with the key committed first).
 */
export async function insertGuestKey(tx: Queryable, appId: string, key: string, r: GuestKeyRecord, ttlHours: number): Promise<void> {
  await tx.query(`DELETE FROM guest_keys WHERE app_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`, [appId, key, ttlHours]);
  await tx.query(`INSERT INTO guest_keys (app_id, key, player_id, grants) VALUES ($1, $2, $3, $4)`, [
    appId,
    key,
    r.playerId,
    JSON.stringify(r.grants),
  ]);
}

/** Forgets keys older than the retention window; returns how many went. */
export async function deleteGuestKeysOlderThan(q: Queryable, hours: number): Promise<number> {
  const r = await q.query('DELETE FROM guest_keys WHERE created_at < now() - make_interval(hours => $1)', [hours]);
  return r.rowCount ?? 0;
}

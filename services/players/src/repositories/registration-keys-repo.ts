import { SessionGrantsSchema, type Queryable } from '@ccs/shared';
import type { z } from 'zod';

type SessionGrants = z.infer<typeof SessionGrantsSchema>;

/** A registration made with an Idempotency-Key, as its retry is compared with it. */
export interface RegistrationKeyRecord {
  playerId: string;
  /** As the first request sent it. */
  email: string;
  /** The guest whose token upgraded itself, else null. */
  callerId: string | null;
  /** What the first answer reported. */
  grants: SessionGrants;
}

/** The registration made with this key within the last `ttlHours`, if any (older ones are forgotten). */
export async function findRegistrationKey(q: Queryable, appId: string, key: string, ttlHours: number): Promise<RegistrationKeyRecord | undefined> {
  const { rows } = await q.query<{ player_id: string; email: string; caller_id: string | null; grants: unknown }>(
    `SELECT player_id, email, caller_id, grants FROM registration_keys
     WHERE app_id = $1 AND key = $2 AND created_at >= now() - make_interval(hours => $3)`,
    [appId, key, ttlHours],
  );
  const r = rows[0];
  return r && { playerId: r.player_id, email: r.email, callerId: r.caller_id, grants: SessionGrantsSchema.parse(r.grants) };
}

/**
 * Records the key with the registration, in its transaction. A forgotten row of the same key
 * (past `ttlHours`, not swept yet) is replaced; a live one makes the INSERT fail on
 * `registration_keys_pkey` (a concurrent registration with the key committed first).
 */
export async function insertRegistrationKey(tx: Queryable, appId: string, key: string, r: RegistrationKeyRecord, ttlHours: number): Promise<void> {
  await tx.query(`DELETE FROM registration_keys WHERE app_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`, [
    appId,
    key,
    ttlHours,
  ]);
  await tx.query(`INSERT INTO registration_keys (app_id, key, player_id, email, caller_id, grants) VALUES ($1, $2, $3, $4, $5, $6)`, [
    appId,
    key,
    r.playerId,
    r.email,
    r.callerId,
    JSON.stringify(r.grants),
  ]);
}

/** Forgets keys older than the retention window; returns how many went. */
export async function deleteRegistrationKeysOlderThan(q: Queryable, hours: number): Promise<number> {
  const r = await q.query('DELETE FROM registration_keys WHERE created_at < now() - make_interval(hours => $1)', [hours]);
  return r.rowCount ?? 0;
}

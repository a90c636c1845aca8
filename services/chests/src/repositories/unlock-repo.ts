import { UnlockRulesSchema, type Queryable, type UnlockRules } from '@ccs/shared';

/** A chest as the unlock reads it: its owner, its type's timer, where its own timer stands. */
export interface UnlockState {
  playerId: string;
  opened: boolean;
  /** The type's timer rules; undefined when the type is not time-locked. */
  unlock?: UnlockRules;
  /** When the timer ends (or ended); null before it starts. */
  unlocksAt: Date | null;
  /** Seconds until `unlocksAt` by the database's clock (≤ 0 once unlocked); null before it starts. */
  remainingSeconds: number | null;
  /** Unlock slots of the app's current content (1 when none is loaded yet). */
  slots: number;
}

/** One chest of the app with its type's timer and the app's unlock slots (undefined: no such chest). */
export async function readUnlockState(db: Queryable, appId: string, chestId: string): Promise<UnlockState | undefined> {
  const r = await db.query<{
    player_id: string;
    opened: boolean;
    unlock: unknown;
    unlocks_at: Date | null;
    remaining: number | null;
    unlock_slots: number | null;
  }>(
    `SELECT c.player_id, c.opened_at IS NOT NULL AS opened, t.unlock, c.unlocks_at,
            extract(epoch FROM c.unlocks_at - now())::float8 AS remaining, cv.unlock_slots
       FROM inventory_chests c
       JOIN chest_types t ON t.app_id = c.app_id AND t.id = c.chest_type_id
       LEFT JOIN apps a ON a.app_id = c.app_id
       LEFT JOIN content_versions cv ON cv.app_id = a.app_id AND cv.version = a.content_version
      WHERE c.app_id = $1 AND c.id = $2`,
    [appId, chestId],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    playerId: row.player_id,
    opened: row.opened,
    ...(row.unlock ? { unlock: UnlockRulesSchema.parse(row.unlock) } : {}),
    unlocksAt: row.unlocks_at,
    remainingSeconds: row.remaining,
    slots: row.unlock_slots ?? 1,
  };
}

/** Serializes one player's timer starts (the slot count is read, then a timer started). */
export async function lockPlayerUnlocks(tx: Queryable, appId: string, playerId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('chests-unlock:' || $1 || ':' || $2, 0))", [appId, playerId]);
}

/** The player's running timers (time-locked, unopened chests still unlocking) and the soonest end. */
export async function runningTimers(db: Queryable, appId: string, playerId: string): Promise<{ count: number; nextEnd?: Date }> {
  const r = await db.query<{ n: number; next_end: Date | null }>(
    `SELECT count(*)::int AS n, min(c.unlocks_at) AS next_end
       FROM inventory_chests c JOIN chest_types t ON t.app_id = c.app_id AND t.id = c.chest_type_id
      WHERE c.app_id = $1 AND c.player_id = $2 AND c.opened_at IS NULL AND c.unlocks_at > now() AND t.unlock IS NOT NULL`,
    [appId, playerId],
  );
  return { count: r.rows[0]!.n, ...(r.rows[0]!.next_end ? { nextEnd: r.rows[0]!.next_end } : {}) };
}

/** Starts a chest's timer of `seconds`, unless it started before or the chest was opened; whether it did. */
export async function startTimer(db: Queryable, appId: string, chestId: string, seconds: number): Promise<boolean> {
  const r = await db.query(
    `UPDATE inventory_chests SET unlock_started_at = now(), unlocks_at = now() + make_interval(secs => $3)
      WHERE app_id = $1 AND id = $2 AND opened_at IS NULL AND unlocks_at IS NULL`,
    [appId, chestId, seconds],
  );
  return r.rowCount === 1;
}

/**
 * Unlocks a chest now (a paid skip), if it is unopened and not unlocked yet; whether it did. The
 * moment is the clock's, not the transaction's start (`now()`): a transaction that started before
 * another one's unlock committed must still see that chest as unlocked.
 */
export async function unlockNow(db: Queryable, appId: string, chestId: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE inventory_chests SET unlock_started_at = coalesce(unlock_started_at, clock_timestamp()), unlocks_at = clock_timestamp()
      WHERE app_id = $1 AND id = $2 AND opened_at IS NULL AND (unlocks_at IS NULL OR unlocks_at > clock_timestamp())`,
    [appId, chestId],
  );
  return r.rowCount === 1;
}

import type { Queryable } from '@ccs/shared';

/** A player's trade stamina and offers of the day, as stored, with the database's clock. */
export interface TradePlayer {
  /** Stamina at `staminaAt` (points come back from then on). */
  stamina: number;
  staminaAt: Date;
  /** Offers made on the UTC day `offersDay` (YYYY-MM-DD). */
  offersDay: string;
  offersToday: number;
  now: Date;
  /** The current UTC day by the database's clock. */
  today: string;
}

/**
 * The player's trade row, locked until the transaction ends: every offer of the player and every
 * end of one of their trades takes it, so stamina and the daily cap are spent and returned
 * exactly. A player's first row starts with `fullStamina`.
 */
export async function lockTradePlayer(q: Queryable, appId: string, playerId: string, fullStamina: number): Promise<TradePlayer> {
  await q.query(
    `INSERT INTO trade_players (app_id, player_id, stamina, stamina_at, offers_day, offers_today)
     VALUES ($1, $2, $3, now(), (now() AT TIME ZONE 'UTC')::date, 0) ON CONFLICT (app_id, player_id) DO NOTHING`,
    [appId, playerId, fullStamina],
  );
  const r = await q.query<{ stamina: number; stamina_at: Date; offers_day: string; offers_today: number; now: Date; today: string }>(
    `SELECT stamina, stamina_at, offers_day::text AS offers_day, offers_today, now() AS now, (now() AT TIME ZONE 'UTC')::date::text AS today
       FROM trade_players WHERE app_id = $1 AND player_id = $2 FOR UPDATE`,
    [appId, playerId],
  );
  const row = r.rows[0]!;
  return {
    stamina: row.stamina,
    staminaAt: row.stamina_at,
    offersDay: row.offers_day,
    offersToday: row.offers_today,
    now: row.now,
    today: row.today,
  };
}

/** Stores the locked row's new stamina and offers of the day. */
export async function saveTradePlayer(
  q: Queryable,
  appId: string,
  playerId: string,
  v: { stamina: number; staminaAt: Date; offersDay: string; offersToday: number },
): Promise<void> {
  await q.query(
    'UPDATE trade_players SET stamina = $3, stamina_at = $4, offers_day = $5::date, offers_today = $6 WHERE app_id = $1 AND player_id = $2',
    [appId, playerId, v.stamina, v.staminaAt, v.offersDay, v.offersToday],
  );
}

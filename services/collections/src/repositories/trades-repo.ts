import type { Queryable, TradeState } from '@ccs/shared';

/** Every state a trade row may be in: the shown ones, the two mid-step ones, and `failed` (an offer whose debit was refused or lost). */
export type TradeRowState = TradeState | 'offering' | 'accepting' | 'failed';

/** One trade as stored. */
export interface TradeRecord {
  id: string;
  appId: string;
  offererId: string;
  partnerId: string;
  giveId: string;
  wantId: string;
  giveRarity: string;
  wantRarity: string;
  tokenCurrency: string | null;
  giveCost: number;
  wantCost: number;
  staminaSpent: boolean;
  state: TradeRowState;
  acceptAttempt: number;
  createdAt: Date;
  expiresAt: Date;
  stateAt: Date;
  endedAt: Date | null;
  /** The database's clock when the row was read (expiry is judged by server time). */
  now: Date;
}

interface TradeRow {
  id: string;
  app_id: string;
  offerer_id: string;
  partner_id: string;
  give_id: string;
  want_id: string;
  give_rarity: string;
  want_rarity: string;
  token_currency: string | null;
  give_cost: number;
  want_cost: number;
  stamina_spent: boolean;
  state: TradeRowState;
  accept_attempt: number;
  created_at: Date;
  expires_at: Date;
  state_at: Date;
  ended_at: Date | null;
  now: Date;
}

const COLUMNS = `id, app_id, offerer_id, partner_id, give_id, want_id, give_rarity, want_rarity, token_currency, give_cost, want_cost,
  stamina_spent, state, accept_attempt, created_at, expires_at, state_at, ended_at, now() AS now`;

const toRecord = (r: TradeRow): TradeRecord => ({
  id: r.id,
  appId: r.app_id,
  offererId: r.offerer_id,
  partnerId: r.partner_id,
  giveId: r.give_id,
  wantId: r.want_id,
  giveRarity: r.give_rarity,
  wantRarity: r.want_rarity,
  tokenCurrency: r.token_currency,
  giveCost: r.give_cost,
  wantCost: r.want_cost,
  staminaSpent: r.stamina_spent,
  state: r.state,
  acceptAttempt: r.accept_attempt,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  stateAt: r.state_at,
  endedAt: r.ended_at,
  now: r.now,
});

/** A new trade, as an offer inserts it. */
export type NewTrade = Pick<
  TradeRecord,
  | 'id'
  | 'appId'
  | 'offererId'
  | 'partnerId'
  | 'giveId'
  | 'wantId'
  | 'giveRarity'
  | 'wantRarity'
  | 'tokenCurrency'
  | 'giveCost'
  | 'wantCost'
  | 'staminaSpent'
> & { state: 'offering' | 'offered'; ttlHours: number };

/** The unique index of open offers per pair and collectible (a second one fails on it). */
export const ONE_OPEN_OFFER_INDEX = 'trades_one_open';

/** Inserts a trade; fails on ONE_OPEN_OFFER_INDEX when the pair already has an open offer of the collectible. */
export async function insertTrade(q: Queryable, t: NewTrade): Promise<TradeRecord> {
  const r = await q.query<TradeRow>(
    `INSERT INTO trades (id, app_id, offerer_id, partner_id, give_id, want_id, give_rarity, want_rarity, token_currency,
                         give_cost, want_cost, stamina_spent, state, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now() + make_interval(hours => $14))
     RETURNING ${COLUMNS}`,
    [
      t.id,
      t.appId,
      t.offererId,
      t.partnerId,
      t.giveId,
      t.wantId,
      t.giveRarity,
      t.wantRarity,
      t.tokenCurrency,
      t.giveCost,
      t.wantCost,
      t.staminaSpent,
      t.state,
      t.ttlHours,
    ],
  );
  return toRecord(r.rows[0]!);
}

/** The trade, locked until the transaction ends (every change of a trade takes this lock first). */
export async function lockTrade(q: Queryable, appId: string, id: string): Promise<TradeRecord | undefined> {
  const r = await q.query<TradeRow>(`SELECT ${COLUMNS} FROM trades WHERE app_id = $1 AND id = $2 FOR UPDATE`, [appId, id]);
  return r.rows[0] && toRecord(r.rows[0]);
}

/** Moves a locked trade to `to`; an ended state sets ended_at, and accepting counts an attempt. */
export async function setTradeState(q: Queryable, id: string, to: TradeRowState): Promise<TradeRecord> {
  const ended = ['completed', 'declined', 'cancelled', 'expired', 'failed'].includes(to);
  const r = await q.query<TradeRow>(
    `UPDATE trades SET state = $2, state_at = now(), ended_at = CASE WHEN $3 THEN now() ELSE ended_at END,
                       accept_attempt = accept_attempt + CASE WHEN $2 = 'accepting' THEN 1 ELSE 0 END
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, to, ended],
  );
  return toRecord(r.rows[0]!);
}

/** Appends a step to the trade's audit log: who (`player:<id>`, `sweeper`), what, and the state after it. */
export async function logTrade(q: Queryable, tradeId: string, actor: string, action: string, state: TradeRowState): Promise<void> {
  await q.query('INSERT INTO trade_log (trade_id, actor, action, state) VALUES ($1, $2, $3, $4)', [tradeId, actor, action, state]);
}

/** One of the player's trades (offerer or partner), unless it failed before it was offered. */
export async function findTrade(q: Queryable, appId: string, playerId: string, id: string): Promise<TradeRecord | undefined> {
  const r = await q.query<TradeRow>(
    `SELECT ${COLUMNS} FROM trades WHERE app_id = $1 AND id = $2 AND (offerer_id = $3 OR partner_id = $3) AND state <> 'failed'`,
    [appId, id, playerId],
  );
  return r.rows[0] && toRecord(r.rows[0]);
}

/** The row states behind each shown state (an offer mid-step shows as offered). */
const ROW_STATES: Record<TradeState, TradeRowState[]> = {
  offered: ['offering', 'offered', 'accepting'],
  completed: ['completed'],
  declined: ['declined'],
  cancelled: ['cancelled'],
  expired: ['expired'],
};

/** A page of the player's trades, newest first: as partner (`incoming`), as offerer (`outgoing`), or both; of the states given (all by default). */
export async function listTrades(
  q: Queryable,
  appId: string,
  playerId: string,
  opts: { role?: 'incoming' | 'outgoing'; states?: TradeState[]; page: { limit: number; offset: number } },
): Promise<{ total: number; trades: TradeRecord[] }> {
  const states = (opts.states?.length ? opts.states : (Object.keys(ROW_STATES) as TradeState[])).flatMap((s) => ROW_STATES[s]);
  const r = await q.query<TradeRow & { total: number }>(
    `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM trades
      WHERE app_id = $1 AND state = ANY($3::text[])
        AND CASE $2::text WHEN 'incoming' THEN partner_id = $4 WHEN 'outgoing' THEN offerer_id = $4 ELSE (partner_id = $4 OR offerer_id = $4) END
      ORDER BY created_at DESC, id LIMIT $5 OFFSET $6`,
    [appId, opts.role ?? null, states, playerId, opts.page.limit, opts.page.offset],
  );
  const total = r.rows[0]?.total ?? (opts.page.offset > 0 ? await countTrades(q, appId, playerId, opts.role ?? null, states) : 0);
  return { total, trades: r.rows.map(toRecord) };
}

async function countTrades(q: Queryable, appId: string, playerId: string, role: string | null, states: string[]): Promise<number> {
  const r = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM trades WHERE app_id = $1 AND state = ANY($3::text[])
        AND CASE $2::text WHEN 'incoming' THEN partner_id = $4 WHEN 'outgoing' THEN offerer_id = $4 ELSE (partner_id = $4 OR offerer_id = $4) END`,
    [appId, role, states, playerId],
  );
  return r.rows[0]!.n;
}

/** A token debit of a trade to give back (written with the decision, settled by reference). */
export async function oweRefund(q: Queryable, appId: string, tradeId: string, reference: string): Promise<void> {
  await q.query('INSERT INTO trade_refunds (reference, app_id, trade_id) VALUES ($1, $2, $3) ON CONFLICT (reference) DO NOTHING', [
    reference,
    appId,
    tradeId,
  ]);
}

/** Marks a refund settled (the wallet refunded it, or voided a debit that never happened). */
export async function refundSettled(q: Queryable, reference: string): Promise<void> {
  await q.query('UPDATE trade_refunds SET done_at = now() WHERE reference = $1 AND done_at IS NULL', [reference]);
}

/** Refunds owed for longer than `olderThanMs` (every app: the sweeper's pass), oldest first. */
export async function refundsDue(q: Queryable, olderThanMs: number, limit: number): Promise<{ reference: string; appId: string; tradeId: string }[]> {
  const r = await q.query<{ reference: string; app_id: string; trade_id: string }>(
    `SELECT reference, app_id, trade_id FROM trade_refunds
      WHERE done_at IS NULL AND created_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return r.rows.map((row) => ({ reference: row.reference, appId: row.app_id, tradeId: row.trade_id }));
}

/** Open offers past their expiry (every app: the sweeper's pass). */
export async function expiredOffers(q: Queryable, limit: number): Promise<{ appId: string; id: string }[]> {
  const r = await q.query<{ app_id: string; id: string }>(
    `SELECT app_id, id FROM trades WHERE state = 'offered' AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
    [limit],
  );
  return r.rows.map((row) => ({ appId: row.app_id, id: row.id }));
}

/** Trades left mid-step (offering or accepting) for longer than `olderThanMs` (every app: the sweeper's pass). */
export async function stuckTrades(q: Queryable, olderThanMs: number, limit: number): Promise<{ appId: string; id: string }[]> {
  const r = await q.query<{ app_id: string; id: string }>(
    `SELECT app_id, id FROM trades
      WHERE state IN ('offering', 'accepting') AND state_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY state_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return r.rows.map((row) => ({ appId: row.app_id, id: row.id }));
}

/** A trade's state and accept attempt as stored now (not locked: the change that follows checks again under the lock). */
export async function tradeStateOf(q: Queryable, appId: string, id: string): Promise<{ state: TradeRowState; acceptAttempt: number } | undefined> {
  const r = await q.query<{ state: TradeRowState; accept_attempt: number }>(
    'SELECT state, accept_attempt FROM trades WHERE app_id = $1 AND id = $2',
    [appId, id],
  );
  return r.rows[0] && { state: r.rows[0].state, acceptAttempt: r.rows[0].accept_attempt };
}

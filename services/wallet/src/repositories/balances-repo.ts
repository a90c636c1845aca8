import type { Queryable } from '@ccs/shared';
import { walletErrors } from '../errors.js';

/** Why a balance changes; the ledger refuses any other value. */
export type LedgerReason =
  | 'credit'
  | 'debit'
  | 'debit_refund'
  | 'initial_currency'
  | 'welcome_bonus'
  | 'registration'
  | 'refund'
  | 'admin';

/** One change of one balance, as the ledger records it. */
export interface BalanceChange {
  appId: string;
  playerId: string;
  currencyId: string;
  /** Positive decimal string; the sign comes from the operation. */
  amount: string;
  reason: LedgerReason;
  reference: string | null;
  requestId: string | null;
}

const params = (c: BalanceChange) => [c.appId, c.playerId, c.currencyId, c.amount, c.reason, c.reference, c.requestId];

/** A sum past NUMERIC(20,2) is the client's doing (many large credits), never a 500. */
function mapOverflow(err: unknown): never {
  if ((err as { code?: string }).code === '22003') throw walletErrors.balanceLimit();
  throw err;
}

/**
 * Adds to a balance and appends its ledger row in one statement: the upsert takes the row lock,
 * so concurrent credits queue instead of overwriting each other. Returns the new balance.
 */
export async function addToBalance(tx: Queryable, c: BalanceChange): Promise<string> {
  const r = await tx
    .query<{ balance: string }>(
      `WITH b AS (
         INSERT INTO balances (app_id, player_id, currency_id, amount) VALUES ($1, $2, $3, $4::numeric)
         ON CONFLICT (app_id, player_id, currency_id)
           DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()
         RETURNING amount
       )
       INSERT INTO ledger (app_id, player_id, currency_id, delta, balance_after, reason, reference, request_id)
       SELECT $1, $2, $3, $4::numeric, b.amount, $5, $6, $7 FROM b
       RETURNING balance_after::text AS balance`,
      params(c),
    )
    .catch(mapOverflow);
  return r.rows[0]!.balance;
}

/**
 * Takes from a balance only if it covers the amount (the condition and the change are one
 * statement under the row lock, so no race can go below zero), with its ledger row.
 * Returns the new balance, or undefined when the funds are insufficient.
 */
export async function takeFromBalance(tx: Queryable, c: BalanceChange): Promise<string | undefined> {
  const r = await tx.query<{ balance: string }>(
    `WITH b AS (
       UPDATE balances SET amount = amount - $4::numeric, updated_at = now()
        WHERE app_id = $1 AND player_id = $2 AND currency_id = $3 AND amount >= $4::numeric
       RETURNING amount
     )
     INSERT INTO ledger (app_id, player_id, currency_id, delta, balance_after, reason, reference, request_id)
     SELECT $1, $2, $3, -($4::numeric), b.amount, $5, $6, $7 FROM b
     RETURNING balance_after::text AS balance`,
    params(c),
  );
  return r.rows[0]?.balance;
}

/** A player's balance of every active currency of the app; "0.00" where none was ever held. */
export async function playerBalances(q: Queryable, appId: string, playerId: string) {
  const r = await q.query<{ currencyId: string; code: string; amount: string }>(
    `SELECT c.id AS "currencyId", c.code, COALESCE(b.amount, 0)::numeric(20, 2)::text AS amount
       FROM currencies c
       LEFT JOIN balances b ON b.app_id = c.app_id AND b.currency_id = c.id AND b.player_id = $2
      WHERE c.app_id = $1 AND c.retired_at IS NULL
      ORDER BY c.position, c.code`,
    [appId, playerId],
  );
  return r.rows;
}

/**
 * Adds up a grant's credits per currency code, in SQL (exact decimals), so each currency gets one
 * ledger row per grant. Returns code → total as a two-decimal string, in first-seen order.
 */
export async function sumByCurrency(q: Queryable, credits: { currency: string; amount: string }[]): Promise<Map<string, string>> {
  const r = await q.query<{ code: string; total: string }>(
    `SELECT c.code, sum(c.amount::numeric)::numeric(20, 2)::text AS total
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS c(code, amount, ord)
      GROUP BY c.code ORDER BY min(c.ord)`,
    [credits.map((c) => c.currency), credits.map((c) => c.amount)],
  );
  return new Map(r.rows.map((row) => [row.code, row.total]));
}

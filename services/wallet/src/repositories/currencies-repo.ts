import { preparedStatement, type CurrencyContentSchema, type Queryable } from '@ccs/shared';
import type { z } from 'zod';

type CurrencyContent = z.infer<typeof CurrencyContentSchema>;

/**
 * Creates or updates the app's currencies from content (the id of a code never changes), and
 * retires the ones the content no longer lists. Balances and ledger rows are never touched.
 * `paidCodes` are the content's `compliance.paid_currencies`: the player credit endpoint refuses them.
 */
export async function upsertCurrencies(tx: Queryable, appId: string, currencies: CurrencyContent[], paidCodes: string[] = []): Promise<void> {
  const unique = [...new Map(currencies.map((c) => [c.code, c])).values()];
  await tx.query(
    `INSERT INTO currencies (app_id, code, name, max_credit, position, paid, whole)
     SELECT $1, c.code, c.name, c.max_credit::numeric, c.ord, c.code = ANY($5::text[]), c.whole
       FROM unnest($2::text[], $3::text[], $4::text[], $6::boolean[]) WITH ORDINALITY AS c(code, name, max_credit, whole, ord)
     ON CONFLICT (app_id, code) DO UPDATE
       SET name = EXCLUDED.name, max_credit = EXCLUDED.max_credit, position = EXCLUDED.position, paid = EXCLUDED.paid,
           whole = EXCLUDED.whole, retired_at = NULL, updated_at = now()`,
    [appId, unique.map((c) => c.code), unique.map((c) => c.name), unique.map((c) => c.max_credit), paidCodes, unique.map((c) => c.whole ?? false)],
  );
  await tx.query(
    `UPDATE currencies SET retired_at = now(), updated_at = now()
      WHERE app_id = $1 AND retired_at IS NULL AND NOT (code = ANY($2::text[]))`,
    [appId, unique.map((c) => c.code)],
  );
}

/** A currency row with the player's balance (null when no player asks) and what the player owes of it. */
export interface CurrencyWithBalance {
  id: string;
  code: string;
  name: string;
  /** Below zero while the player is in debt. */
  balance: string | null;
  /** The amount owed ("300.00" for a balance of -300.00); null unless the balance is below zero. */
  debt: string | null;
}

/** The app's active currencies in content order, each with `playerId`'s balance when given. */
export async function listCurrencies(q: Queryable, appId: string, playerId: string | undefined): Promise<CurrencyWithBalance[]> {
  const r = await q.query<CurrencyWithBalance>(
    `SELECT c.id, c.code, c.name,
            CASE WHEN $2::uuid IS NULL THEN NULL ELSE COALESCE(b.amount, 0)::numeric(20, 2) END AS balance,
            CASE WHEN b.amount < 0 THEN (-b.amount)::text END AS debt
       FROM currencies c
       LEFT JOIN balances b ON b.app_id = c.app_id AND b.currency_id = c.id AND b.player_id = $2::uuid
      WHERE c.app_id = $1 AND c.retired_at IS NULL
      ORDER BY c.position, c.code`,
    [appId, playerId ?? null],
  );
  return r.rows;
}

const CURRENCY_IDS_BY_CODE = preparedStatement(
  'wallet_currency_ids_by_code',
  'SELECT id, code FROM currencies WHERE app_id = $1 AND code = ANY($2::text[]) AND retired_at IS NULL',
);

/** Ids of the app's active currencies by code; codes the app does not have are absent. */
export async function currencyIdsByCode(q: Queryable, appId: string, codes: string[]): Promise<Map<string, string>> {
  const r = await q.query<{ id: string; code: string }>(CURRENCY_IDS_BY_CODE.with([appId, codes]));
  return new Map(r.rows.map((row) => [row.code, row.id]));
}

/**
 * The app's live currency with this code, and how an amount compares with it (above zero, within
 * its maximum credit, whole units for a `whole` currency); undefined when the app has no such live currency.
 */
export async function checkAmountAgainstCurrency(
  q: Queryable,
  appId: string,
  code: string,
  amount: string,
): Promise<{ id: string; maxCredit: string; positive: boolean; withinMax: boolean; inUnits: boolean } | undefined> {
  const c = await q.query<{ id: string; maxCredit: string; positive: boolean; withinMax: boolean; inUnits: boolean }>(
    `SELECT id, max_credit::text AS "maxCredit", $3::numeric > 0 AS positive, $3::numeric <= max_credit AS "withinMax",
            NOT whole OR $3::numeric = trunc($3::numeric) AS "inUnits"
       FROM currencies WHERE app_id = $1 AND code = $2 AND retired_at IS NULL`,
    [appId, code, amount],
  );
  return c.rows[0];
}

import { DomainEventPublished, preparedStatement, type OutboxMessage, type PreparedStatement, type Queryable } from '@ccs/shared';
import { walletErrors } from '../errors.js';

/**
 * A `currency.credited` webhook event (docs/webhooks.md) for each row the ledger CTE `l` inserted
 * with a positive delta, written to the outbox by the same statement (no round trip of its own).
 * Its id is drawn when the ledger row is written, so one credit has one event. `l` must return
 * app_id, player_id, currency_id, delta, reason, reference and created_at; `$h` is the message
 * headers (JSON). The outbox rows are returned as `events` for the caller to publish after its commit.
 * Only when the app's webhooks take the type (`eventsPart`): otherwise the statement is the plain
 * credit, without the CTE, so an app without webhooks pays nothing.
 */
const creditedEvents = (h: string) => `ev AS (
  INSERT INTO outbox (id, subject, payload, headers)
  SELECT e.id, '${DomainEventPublished.subject}',
         jsonb_build_object(
           'eventId', e.id, 'type', 'currency.credited', 'appId', l.app_id, 'playerId', l.player_id, 'occurredAt', e.at,
           'data', jsonb_build_object('player_id', l.player_id, 'currency', c.code, 'amount', l.delta::text, 'reason', l.reason,
                                      'reference', l.reference, 'credited_at', e.at)),
         ${h}::jsonb
    FROM l JOIN currencies c ON c.id = l.currency_id
   CROSS JOIN LATERAL (SELECT gen_random_uuid() AS id, to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at) e
   WHERE l.delta > 0
  RETURNING id, subject, payload, headers
)`;
const LEDGER_RETURNING = 'app_id, player_id, currency_id, delta, reason, reference, created_at, balance_after';
const EVENTS = "(SELECT coalesce(json_agg(ev), '[]') FROM ev) AS events";

/** The event CTE and the `events` column of a credit statement, or neither. */
interface EventsSql {
  cte: string;
  column: string;
}
const NO_EVENTS: EventsSql = { cte: '', column: "'[]'::json AS events" };
const WITH_EVENTS: EventsSql = { cte: `, ${creditedEvents('$8')}`, column: EVENTS };

/** The events' SQL of a credit statement, and its headers parameter ($8) when it writes the event. */
function eventsPart(c: { appId: string; playerId: string; requestId: string | null; emitEvent?: boolean }) {
  return c.emitEvent === false ? { ...NO_EVENTS, params: [] as string[] } : { ...WITH_EVENTS, params: [eventHeaders(c)] };
}

/** A credit statement in its two variants, each named: with the event it writes, and without. */
function creditStatement(name: string, text: (ev: EventsSql) => string, headersParam = '$8'): (c: { emitEvent?: boolean }) => PreparedStatement {
  const plain = preparedStatement(name, text(NO_EVENTS));
  const evented = preparedStatement(
    `${name}_event`,
    text(headersParam === '$8' ? WITH_EVENTS : { cte: `, ${creditedEvents(headersParam)}`, column: EVENTS }),
  );
  return (c) => (c.emitEvent === false ? plain : evented);
}

/** The headers of a credit's event message: the request and the player it concerns. */
const eventHeaders = (c: { appId: string; playerId: string; requestId: string | null }) =>
  JSON.stringify({ 'ccs-request-id': c.requestId ?? 'wallet', 'ccs-app-id': c.appId, 'ccs-player-id': c.playerId });

/** A credit's balance and the event messages its statement wrote. */
export interface Credited {
  balance: string;
  events: OutboxMessage[];
}

/** Why a balance changes; the ledger refuses any other value. */
export type LedgerReason =
  | 'credit'
  | 'debit'
  | 'debit_refund'
  | 'initial_currency'
  | 'welcome_bonus'
  | 'registration'
  | 'refund'
  | 'admin'
  | 'duplicate_conversion'
  | 'collection_reward'
  | 'studio_grant'
  | 'spark_conversion'
  | 'store_purchase'
  | 'store_refund'
  | 'store_refund_reversed'
  | 'trade_dissolve';

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
  /** Whether to write the credit's currency.credited webhook event (the app's webhooks take it); default yes. */
  emitEvent?: boolean;
}

const params = (c: BalanceChange) => [c.appId, c.playerId, c.currencyId, c.amount, c.reason, c.reference, c.requestId];

/** A sum past NUMERIC(20,2) is the client's doing (many large credits), never a 500. */
function mapOverflow(err: unknown): never {
  if ((err as { code?: string }).code === '22003') throw walletErrors.balanceLimit();
  throw err;
}

/** The end of a balance credit (its CTE `b` returns the new amount): the ledger row, its event, the answer. */
const creditTail = (ev: { cte: string; column: string }) => `, l AS (
         INSERT INTO ledger (app_id, player_id, currency_id, delta, balance_after, reason, reference, request_id)
         SELECT $1, $2, $3, $4::numeric, b.amount, $5, $6, $7 FROM b
         RETURNING ${LEDGER_RETURNING}
       )${ev.cte}
       SELECT balance_after::text AS balance, ${ev.column} FROM l`;

const ADD_TO_BALANCE = creditStatement(
  'wallet_add_to_balance',
  (ev) => `WITH b AS (
         INSERT INTO balances (app_id, player_id, currency_id, amount) VALUES ($1, $2, $3, $4::numeric)
         ON CONFLICT (app_id, player_id, currency_id)
           DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()
         RETURNING amount
       )${creditTail(ev)}`,
);

/**
 * Adds to a balance and appends its ledger row in one statement: the upsert takes the row lock,
 * so concurrent credits queue instead of overwriting each other. Returns the new balance.
 */
export async function addToBalance(tx: Queryable, c: BalanceChange): Promise<Credited> {
  const ev = eventsPart(c);
  const r = await tx.query<{ balance: string; events: OutboxMessage[] }>(ADD_TO_BALANCE(c).with([...params(c), ...ev.params])).catch(mapOverflow);
  return r.rows[0]!;
}

const ADD_TO_BALANCE_ONCE = creditStatement(
  'wallet_add_to_balance_once',
  (ev) => `WITH fresh AS (
         SELECT 1 WHERE NOT EXISTS (
           SELECT 1 FROM ledger
            WHERE app_id = $1 AND player_id = $2 AND currency_id = $3 AND reason = $5 AND reference = $6 AND reason <> 'credit')
       ), b AS (
         INSERT INTO balances (app_id, player_id, currency_id, amount) SELECT $1, $2, $3, $4::numeric FROM fresh
         ON CONFLICT (app_id, player_id, currency_id)
           DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()
         RETURNING amount
       )${creditTail(ev)}`,
);

/**
 * Adds to a balance with its ledger row unless the ledger already has a row of this reason and
 * reference (one statement; the check reads the ledger_once index). Two concurrent credits of one
 * reference cannot both land: the second waits on the balance row, then its ledger row violates
 * ledger_once and its transaction rolls back. Returns the new balance, or undefined when the
 * reference was already credited.
 */
export async function addToBalanceOnce(tx: Queryable, c: BalanceChange & { reference: string }): Promise<Credited | undefined> {
  const ev = eventsPart(c);
  const r = await tx
    .query<{ balance: string; events: OutboxMessage[] }>(ADD_TO_BALANCE_ONCE(c).with([...params(c), ...ev.params]))
    .catch(mapOverflow);
  return r.rows[0];
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

/**
 * The figures of a refused debit, as the wallet states amounts (two decimals): the player's balance
 * of the currency now ("0.00" when none; below zero for a debt) and the amount the debit needed.
 */
export async function debitShortfall(
  q: Queryable,
  d: { appId: string; playerId: string; currencyId: string; amount: string },
): Promise<{ balance: string; required: string }> {
  const r = await q.query<{ balance: string; required: string }>(
    `SELECT round(coalesce((SELECT amount FROM balances WHERE app_id = $1 AND player_id = $2 AND currency_id = $3), 0), 2)::text AS balance,
            round($4::numeric, 2)::text AS required`,
    [d.appId, d.playerId, d.currencyId, d.amount],
  );
  return r.rows[0]!;
}

/**
 * A store refund's claw-back: takes the amount from a balance whatever it holds, below zero if it
 * must (a debt), with its ledger row, unless the ledger already has a row of this reason and
 * reference (one statement, as `addToBalanceOnce`; the ledger_once index stops a concurrent
 * second one). The only change that may take a balance below zero: the statement first sets
 * `wallet.store_refund` for its transaction (the CTE `allowed`, which the change depends on, so it
 * runs first), without which the balances' trigger refuses it, and the ledger's check refuses a
 * row ending below zero for any other reason that lowers it. Returns the new balance, or
 * undefined when the reference was already taken back.
 */
export async function takeBelowZeroOnce(
  tx: Queryable,
  c: BalanceChange & { reason: 'store_refund'; reference: string },
): Promise<string | undefined> {
  const r = await tx
    .query<{ balance: string }>(
      `WITH allowed AS (
         SELECT set_config('wallet.store_refund', 'on', true) AS flag
       ), fresh AS (
         SELECT 1 FROM allowed WHERE allowed.flag = 'on' AND NOT EXISTS (
           SELECT 1 FROM ledger WHERE app_id = $1 AND player_id = $2 AND currency_id = $3 AND reason = $5 AND reference = $6)
       ), b AS (
         INSERT INTO balances (app_id, player_id, currency_id, amount) SELECT $1, $2, $3, -($4::numeric) FROM fresh
         ON CONFLICT (app_id, player_id, currency_id)
           DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()
         RETURNING amount
       )
       INSERT INTO ledger (app_id, player_id, currency_id, delta, balance_after, reason, reference, request_id)
       SELECT $1, $2, $3, -($4::numeric), b.amount, $5, $6, $7 FROM b
       RETURNING balance_after::text AS balance`,
      params(c),
    )
    .catch(mapOverflow);
  return r.rows[0]?.balance;
}

/** A player's balance of every active currency of the app; "0.00" where none was ever held, below zero for a debt. */
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

/** What a checked credit found: the app's rule, the currency and the amount's checks, and the new balance if it was made. */
export interface CheckedCredit {
  /** players may credit with the publishable key (null: the app has no content yet). */
  allowed: boolean | null;
  /** The currency (null when the app has no such active currency). */
  currencyId: string | null;
  /** The currency is one of the content's paid_currencies: never credited by a player (null: no such currency). */
  paid: boolean | null;
  maxCredit: string | null;
  positive: boolean | null;
  withinMax: boolean | null;
  /** The amount is in the currency's units (a whole number of a `whole` currency). */
  inUnits: boolean | null;
  /** The balance after the credit; null when a check failed and nothing changed. */
  balance: string | null;
  /** The credit's `currency.credited` event message (none when nothing changed). */
  events: OutboxMessage[];
}

const CREDIT_CHECKED = creditStatement(
  'wallet_credit_checked',
  (ev) => `WITH app AS (SELECT player_credit_allowed AS allowed FROM apps WHERE app_id = $1),
       target AS (
         SELECT id, paid, max_credit::text AS max_credit, $4::numeric AS amount, $4::numeric > 0 AS positive, $4::numeric <= max_credit AS within_max,
                NOT whole OR $4::numeric = trunc($4::numeric) AS in_units
           FROM currencies WHERE app_id = $1 AND id = $3 AND retired_at IS NULL
       ),
       b AS (
         INSERT INTO balances (app_id, player_id, currency_id, amount)
         SELECT $1, $2, t.id, t.amount FROM target t
          WHERE t.positive AND t.within_max AND t.in_units AND NOT t.paid AND ($7 OR (SELECT allowed FROM app) IS DISTINCT FROM false)
         ON CONFLICT (app_id, player_id, currency_id)
           DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()
         RETURNING amount
       ),
       l AS (
         INSERT INTO ledger (app_id, player_id, currency_id, delta, balance_after, reason, reference, request_id, retry_key)
         SELECT $1, $2, $3, t.amount, b.amount, 'credit', $5, $6, $8::uuid FROM b, target t
         RETURNING ${LEDGER_RETURNING}
       )${ev.cte}
       SELECT (SELECT allowed FROM app) AS allowed, t.id AS "currencyId", t.paid, t.max_credit AS "maxCredit",
              t.positive, t.within_max AS "withinMax", t.in_units AS "inUnits", (SELECT balance_after::text FROM l) AS balance, ${ev.column}
         FROM (SELECT 1) one LEFT JOIN target t ON true`,
  '$9',
);

/**
 * A player's credit in ONE statement: checks the app's rule for publishable keys, the currency (it
 * must exist and not be a paid one) and the amount (exact decimals, in SQL), and only when all pass adds to the balance and appends the
 * ledger row. Atomic on its own (no transaction needed around it); the caller turns a failed check
 * into its error. The amount reaches the NUMERIC(20,2) columns only through the checked row, so
 * an amount too large for them is refused by the maximum check, not by an overflow at planning.
 * With `retryKey` (the gateway's key for one HTTP request) the ledger row carries it: a repeat of
 * the request fails on `ledger_retry_once` as a whole, with nothing changed.
 */
export async function creditChecked(
  q: Queryable,
  c: Omit<BalanceChange, 'reason'> & { secretKey: boolean; retryKey?: string },
): Promise<CheckedCredit> {
  const ev = eventsPart(c);
  const params = [c.appId, c.playerId, c.currencyId, c.amount, c.reference, c.requestId, c.secretKey, c.retryKey ?? null, ...ev.params];
  const r = await q.query<CheckedCredit>(CREDIT_CHECKED(c).with(params)).catch(mapOverflow);
  return r.rows[0]!;
}

/** A player's balance of one currency now ('0.00' when none), e.g. to answer a credit's repeat. */
export async function balanceOf(q: Queryable, appId: string, playerId: string, currencyId: string): Promise<string> {
  const r = await q.query<{ amount: string }>(
    'SELECT amount::text AS amount FROM balances WHERE app_id = $1 AND player_id = $2 AND currency_id = $3',
    [appId, playerId, currencyId],
  );
  return r.rows[0]?.amount ?? '0.00';
}

/**
 * Sums each group of credits per currency in one statement (numeric sums, rounded to the
 * balance column's 2 decimals), each group's currencies in their first order: one map per group,
 * in the groups' order. Used to pool a batch of grants' credits into one ledger row per grant and
 * currency.
 */
export async function sumCreditsPerCurrency(q: Queryable, groups: { currency: string; amount: string }[][]): Promise<Map<string, string>[]> {
  const sums = groups.map(() => new Map<string, string>());
  const rows = groups.flatMap((credits, group) => credits.map((c) => ({ group, ...c })));
  if (rows.length === 0) return sums;
  const r = await q.query<{ grp: number; code: string; total: string }>(
    `SELECT c.grp, c.code, sum(c.amount::numeric)::numeric(20, 2)::text AS total
       FROM unnest($1::int[], $2::text[], $3::text[]) WITH ORDINALITY AS c(grp, code, amount, ord)
      GROUP BY c.grp, c.code ORDER BY c.grp, min(c.ord)`,
    [rows.map((c) => c.group), rows.map((c) => c.currency), rows.map((c) => c.amount)],
  );
  for (const row of r.rows) sums[row.grp]!.set(row.code, row.total);
  return sums;
}

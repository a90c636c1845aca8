import { z } from 'zod';
import { defineQuery, defineSubject, RetryKeySchema } from './subject.js';
import { CurrencyContentSchema } from './content.js';
import { DecimalSchema, SignedDecimalSchema, UuidSchema } from './context.js';

/** A currency code as content files spell it (`coins`, `gems`). */
export const CurrencyCodeSchema = CurrencyContentSchema.shape.code;

/**
 * One currency of the calling app; `balance` is the calling player's, absent without a player,
 * below zero while the player is in debt, and `debt` is then what the player owes (a positive
 * amount: `balance` -300.00 is `debt` 300.00), absent otherwise.
 */
export const CurrencyViewSchema = z.object({
  id: UuidSchema,
  code: CurrencyCodeSchema,
  name: z.string(),
  balance: SignedDecimalSchema.optional(),
  debt: DecimalSchema.optional(),
});
/** One currency as the wallet reports it. */
export type CurrencyView = z.infer<typeof CurrencyViewSchema>;

/** Lists the app's currencies (ctx.appId), with ctx.playerId's balances when a player calls. */
export const ListCurrencies = defineQuery('wallet.v1.list_currencies', z.object({}), z.object({ currencies: z.array(CurrencyViewSchema) }), {
  callers: ['gateway'],
});

/**
 * Credits ctx.playerId's balance of one currency (the spec's credit endpoint). `keyKind` is the
 * kind of apikey the client used: apps may require a secret key. `idempotencyKey` makes a retry
 * return the first answer; `amount` is the client's string, unchanged (it is part of the body hash).
 */
export const CreditCurrency = defineSubject(
  'wallet.v1.credit',
  z.object({
    currencyId: UuidSchema,
    amount: DecimalSchema,
    keyKind: z.enum(['publishable', 'secret']),
    idempotencyKey: z.string().min(1).max(255).optional(),
    retryKey: RetryKeySchema.optional(),
  }),
  z.object({
    /** Below zero when the credit covered only part of a debt. */
    balance: SignedDecimalSchema,
    /** True when this is a stored answer to an earlier request with the same Idempotency-Key. */
    replayed: z.boolean(),
  }),
  { callers: ['gateway'], keyedRetry: true },
);

/** A debit's reference: the caller's id of it (e.g. `purchase:<uuid>`), printable ASCII. */
export const DebitReferenceSchema = z.string().regex(/^[\x21-\x7e]{1,200}$/);

/**
 * Debits a player's balance (purchases); never below zero (409 insufficient_funds), nothing at all
 * while the balance is below zero (403 currency_in_debt, `meta.currency` and `meta.debt`),
 * idempotent on `reference`.
 */
export const DebitCurrency = defineSubject(
  'wallet.v1.debit',
  z.object({
    playerId: UuidSchema,
    currency: CurrencyCodeSchema,
    amount: DecimalSchema,
    /** The caller's id of this debit (e.g. the purchase id); a retry with it changes nothing. */
    reference: DebitReferenceSchema,
  }),
  z.object({ currencyId: UuidSchema, currency: CurrencyCodeSchema, balance: DecimalSchema }),
  // chests: purchases, keys and skips; collections: the token costs of trades.
  { callers: ['chests', 'collections'] },
);

/** Compensation of a debit: credits back exactly the debit with `reference`, at most once. */
export const RefundDebit = defineSubject(
  'wallet.v1.refund',
  z.object({ reference: DebitReferenceSchema }),
  z.object({
    outcome: z.enum(['refunded', 'already_refunded', 'unknown_reference']),
    /** The balance after the refund, when this call refunded (below zero if a store refund left a debt meanwhile). */
    balance: SignedDecimalSchema.optional(),
  }),
  { callers: ['chests', 'collections'] },
);

/** A player's balance of every currency of the app ("0.00" where nothing was ever credited, below zero for a debt). */
export const GetBalances = defineQuery(
  'wallet.v1.balances',
  z.object({ playerId: UuidSchema }),
  z.object({ balances: z.array(z.object({ currencyId: UuidSchema, code: CurrencyCodeSchema, amount: SignedDecimalSchema })) }),
  { callers: ['chests', 'gateway'] },
);

/** A studio grant's reference: the studio's id of it (a store receipt, an order id), 1 to 200 characters. */
export const GrantReferenceSchema = z.string().min(1).max(200);

/**
 * The studio's grant of a currency to one of its players (POST /api/v1/admin/players/{id}/credits,
 * secret key only): any currency of the app, paid ones included, ledger reason `studio_grant`.
 * Once per app and `reference`: the same reference with the same player, currency and amount
 * answers the first result again (`replayed`), with anything else 409 `reference_reused`. The
 * gateway has checked that the player is the app's.
 */
export const AdminCreditPlayer = defineSubject(
  'wallet.v1.admin_credit',
  z.object({
    appId: UuidSchema,
    playerId: UuidSchema,
    currency: CurrencyCodeSchema,
    amount: DecimalSchema,
    reference: GrantReferenceSchema,
  }),
  z.object({
    currency: CurrencyCodeSchema,
    /** The player's balance of the currency just after the grant (the first grant's, on a repeat); below zero when it covered only part of a debt. */
    balance: SignedDecimalSchema,
    replayed: z.boolean(),
  }),
  { callers: ['gateway'] },
);

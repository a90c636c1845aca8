import { AppError } from '@ccs/shared';

/** The wallet's domain errors, with the stable codes clients and other services see. */
export const walletErrors = {
  currencyNotFound: (source?: { parameter: string }) => AppError.notFound('currency_not_found', 'No such currency in this app.', source),
  amountNotPositive: (pointer = '/amount') => AppError.unprocessable('amount_not_positive', 'amount must be greater than zero.', { pointer }),
  amountNotWhole: (pointer = '/amount') =>
    AppError.unprocessable('amount_not_whole', 'This currency is counted in whole units (a key, a ticket): the amount must be a whole number.', {
      pointer,
    }),
  amountAboveMaximum: (max: string, pointer = '/amount') =>
    AppError.unprocessable('amount_above_maximum', `amount must be at most ${max} for this currency.`, { pointer }),
  playerCreditDisabled: () =>
    AppError.forbidden(
      'player_credit_disabled',
      "This app's content does not let players credit their own balances (players.player_credit_allowed); the studio grants currency with its secret key (POST /api/v1/admin/players/{player_id}/credits).",
    ),
  paidCurrency: () =>
    AppError.forbidden(
      'paid_currency',
      "This is a paid currency (the app's compliance.paid_currencies): players cannot credit it; the studio grants it with its secret key (POST /api/v1/admin/players/{player_id}/credits).",
    ),
  /** A studio grant naming a currency the app does not have (a body attribute, so 422). */
  grantCurrencyUnknown: () =>
    AppError.unprocessable('currency_not_found', 'No such currency in this app (give its code, e.g. "coins").', {
      pointer: '/data/attributes/currency',
    }),
  grantReferenceReused: () =>
    AppError.conflict(
      'reference_reused',
      'This reference was already used for a different grant (another player, currency or amount); a new grant needs a new reference.',
      { pointer: '/data/attributes/reference' },
    ),
  idempotencyKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key for a new request.', {
      header: 'Idempotency-Key',
    }),
  idempotencyKeyBusy: () =>
    AppError.conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is being processed; retry shortly.', {
      header: 'Idempotency-Key',
    }),
  /**
   * The balance does not cover the debit: `required` is what it needed and `balance` what the
   * player holds (decimal strings, as balances are answered), so a client can offer the difference.
   */
  insufficientFunds: (currency: string, required: string, balance: string) =>
    new AppError({
      kind: 'conflict',
      code: 'insufficient_funds',
      detail: `This needs ${required} ${currency}, and the balance is ${balance} ${currency}.`,
      meta: { currency, required, balance },
    }),
  /**
   * The balance is below zero (a store refund took back currency that was already spent): no
   * spend of this currency until credits bring it back to zero. `debt` is what is owed ("300.00").
   */
  currencyInDebt: (currency: string, debt: string) =>
    new AppError({
      kind: 'forbidden',
      code: 'currency_in_debt',
      detail: `The balance of ${currency} is below zero: ${debt} ${currency} is owed (a store refund took back currency that was already spent). Nothing can be spent in ${currency} until the balance is brought back to zero.`,
      meta: { currency, debt },
    }),
  referenceReused: () => AppError.conflict('reference_reused', 'This debit reference was already used for a different debit.'),
  referenceVoided: () => AppError.conflict('reference_voided', 'This debit was cancelled (refunded before it arrived); nothing was taken.'),
  balanceLimit: () => AppError.conflict('balance_limit_exceeded', 'This change would take the balance above the largest amount the wallet holds.'),
};

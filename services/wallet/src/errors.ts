import { AppError } from '@ccs/shared';

/** The wallet's domain errors, with the stable codes clients and other services see. */
export const walletErrors = {
  currencyNotFound: (source?: { parameter: string }) => AppError.notFound('currency_not_found', 'No such currency in this app.', source),
  amountNotPositive: () => AppError.unprocessable('amount_not_positive', 'amount must be greater than zero.', { pointer: '/amount' }),
  amountAboveMaximum: (max: string) =>
    AppError.unprocessable('amount_above_maximum', `amount must be at most ${max} for this currency.`, { pointer: '/amount' }),
  secretKeyRequired: () =>
    AppError.forbidden('secret_key_required', "This app only accepts credits made with its secret key, from the studio's servers."),
  idempotencyKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key for a new request.', {
      header: 'Idempotency-Key',
    }),
  idempotencyKeyBusy: () =>
    AppError.conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is being processed; retry shortly.', {
      header: 'Idempotency-Key',
    }),
  insufficientFunds: (code: string) => AppError.conflict('insufficient_funds', `The balance of ${code} is too low for this debit.`),
  referenceReused: () => AppError.conflict('reference_reused', 'This debit reference was already used for a different debit.'),
  referenceVoided: () => AppError.conflict('reference_voided', 'This debit was cancelled (refunded before it arrived); nothing was taken.'),
  balanceLimit: () => AppError.conflict('balance_limit_exceeded', 'This change would take the balance above the largest amount the wallet holds.'),
};

import { CreditResult, CurrencyListDocument } from '../../resources/currencies.js';
import { variantOf, type OperationDoc } from '../route-doc.js';
import { ALIAS_NOTE, idempotencyKeyHeader, INVALID_ID, INVALID_IDEMPOTENCY_KEY, REPLAYED_HEADER, uuidParam } from './common.js';

/** Documentation of currencies and credits. */

/** GET /api/v1/currencies. */
export const listCurrencies: OperationDoc = {
  operationId: 'listCurrencies',
  tag: 'Currencies',
  summary: "The app's currencies",
  description:
    "The app's currencies with UUID ids; with a Bearer token each carries the player's balance as a decimal string. " +
    'A balance below zero is a debt (a store refund took back currency that was already spent): `balance.amount` is negative (`"-300.00"`) and `meta.debt` says what is owed (`"300.00"`); ' +
    'until credits bring it back to zero, every spend of that currency is refused with 403 `currency_in_debt`.',
  token: 'optional',
  responses: [{ status: 200, description: 'The currencies.', schema: CurrencyListDocument }],
};

/** GET /currencies. */
export const listCurrenciesAlias = variantOf(listCurrencies, 'listCurrenciesAlias', ALIAS_NOTE);

/** POST /api/v1/currencies/{currency_id}/credit. */
export const creditCurrency: OperationDoc = {
  operationId: 'creditCurrency',
  tag: 'Currencies',
  summary: "Credit the player's balance",
  description:
    "Adds `amount` to the calling player's balance of one currency and answers the new balance. Plain `application/json` in and out, as the spec shows (errors are still JSON:API error documents). " +
    "The amount is a string matching `^\\d+(\\.\\d{1,2})?$`, above zero and at most the currency's maximum credit. " +
    "Only free currencies, and only in apps whose content says `players.player_credit_allowed: true` (the demo app does; the default is false, where only the app's secret key may credit): a paid currency is never credited here, the studio grants it with its secret key (POST /api/v1/admin/players/{id}/credits). " +
    'With an `Idempotency-Key`, the same key and body give the first answer again (credited once); the same key with another body gets 409.',
  token: 'required',
  params: { currency_id: uuidParam('The currency (its UUID from the currency list).') },
  headers: idempotencyKeyHeader('the first answer'),
  bodyExample: { amount: '25.50' },
  responses: [
    {
      status: 200,
      description: 'Credited: the balance after the credit.',
      schema: CreditResult,
      mediaType: 'application/json',
      headers: REPLAYED_HEADER,
    },
  ],
  errors: {
    400: [INVALID_ID, INVALID_IDEMPOTENCY_KEY],
    403: [
      "a paid currency (the app's `compliance.paid_currencies`), whatever the key: the studio grants those with POST /api/v1/admin/players/{id}/credits (`paid_currency`)",
      "the app's content does not let players credit (`players.player_credit_allowed`, false unless the content says true) and the key is the publishable one (`player_credit_disabled`)",
    ],
    404: ['no such currency in this app (`currency_not_found`)'],
    409: [
      'the Idempotency-Key was used with another body (`idempotency_key_reused`)',
      'a request with the same Idempotency-Key is still being processed (`idempotency_key_in_use`): retry shortly',
      'the balance would exceed the largest amount the wallet holds (`balance_limit_exceeded`)',
    ],
    422: [
      "`amount` zero (`amount_not_positive`), above the currency's maximum credit (`amount_above_maximum`), or a fraction of a currency counted in whole units (`amount_not_whole`)",
    ],
  },
};

/** POST /currencies/{currency_id}/credit. */
export const creditCurrencyAlias = variantOf(creditCurrency, 'creditCurrencyAlias', ALIAS_NOTE);

import { AppError, type Money, type SpendStanding } from '@ccs/shared';

/** Where a purchase's refusals point: the attribute of the request that carried the receipt. */
const RECEIPT = { pointer: '/data/attributes/signed_transaction' };
const TOKEN = { pointer: '/data/attributes/purchase_token' };
const receiptSource = (platform: 'apple' | 'google') => (platform === 'apple' ? RECEIPT : TOKEN);

/** The store service's domain errors, with the stable codes clients and other services see. */
export const storeErrors = {
  /** A receipt that does not verify: a bad signature, an untrusted or expired chain, a malformed JWS or token. */
  receiptInvalid: (platform: 'apple' | 'google', why: string) =>
    new AppError({
      kind: 'invalid',
      code: 'receipt_invalid',
      detail: `The receipt does not verify: ${why}. Nothing was granted.`,
      source: receiptSource(platform),
    }),
  receiptWrongApp: (platform: 'apple' | 'google', what: string) =>
    new AppError({
      kind: 'invalid',
      code: 'receipt_wrong_app',
      detail: `The receipt is for another app (${what}); nothing was granted.`,
      source: receiptSource(platform),
    }),
  receiptWrongEnvironment: (got: string, want: string) =>
    new AppError({
      kind: 'invalid',
      code: 'receipt_wrong_environment',
      detail: `The receipt is from the ${got} environment; this app takes ${want} receipts (store.apple.environment). Nothing was granted.`,
      source: RECEIPT,
    }),
  unknownProduct: (platform: 'apple' | 'google', storeProductId: string) =>
    new AppError({
      kind: 'invalid',
      code: 'unknown_product',
      detail: `No product of this app's store content has the ${platform === 'apple' ? 'App Store' : 'Google Play'} product id "${storeProductId}". Nothing was granted.`,
      source: platform === 'apple' ? RECEIPT : { pointer: '/data/attributes/product_id' },
      meta: { store_product_id: storeProductId },
    }),
  receiptRevoked: (platform: 'apple' | 'google') =>
    new AppError({
      kind: 'invalid',
      code: 'receipt_revoked',
      detail: 'The store refunded, revoked or cancelled this purchase. Nothing was granted.',
      source: receiptSource(platform),
    }),
  receiptWrongPlayer: (platform: 'apple' | 'google') =>
    new AppError({
      kind: 'invalid',
      code: 'receipt_wrong_player',
      detail:
        platform === 'apple'
          ? "The transaction's appAccountToken names another player: set it to the player's id when the purchase starts. Nothing was granted."
          : "The purchase's obfuscatedExternalAccountId names another player: set it to the player's id when the purchase starts. Nothing was granted.",
      source: receiptSource(platform),
    }),
  purchasePending: () =>
    AppError.conflict(
      'purchase_pending',
      'Google Play has not completed this purchase yet (purchaseState pending): submit it again once it completes. Nothing was granted.',
      TOKEN,
    ),
  transactionClaimed: () =>
    AppError.conflict('transaction_claimed', 'This store transaction was already granted to another player. Nothing was granted.'),
  notConfigured: (what: string) =>
    AppError.conflict('store_not_configured', `This app does not sell through this store yet: ${what}. Nothing was granted.`),
  /** Google slow or down: nothing was granted, and the same request later grants once. */
  unavailable: (retryAfterSeconds: number) =>
    new AppError({
      kind: 'unavailable',
      code: 'store_unavailable',
      detail: 'Google Play did not answer in time. Nothing was granted; send the same purchase again shortly (it is granted once).',
      meta: { retry_after_seconds: Math.max(1, Math.ceil(retryAfterSeconds)) },
    }),
  credentialsRejected: () =>
    new AppError({
      kind: 'unavailable',
      code: 'store_credentials_rejected',
      detail:
        "Google Play refused this app's service account: give it access in Play Console (Users and permissions, financial data) or set new credentials (PUT /api/v1/admin/store/google-credentials). Nothing was granted.",
      meta: { retry_after_seconds: 60 },
    }),
  /** A spend limit in money would be passed (`meta.limit`; `meta.rule` when a rule pack's). */
  spendLimitReached: (s: SpendStanding, price: Money | null) =>
    new AppError({
      kind: 'forbidden',
      code: 'spend_limit_reached',
      detail: `${
        s.limit === 0
          ? `You may not make payments (a spend limit of 0 ${s.money}).`
          : s.period === 'payment'
            ? `This payment is more than the ${s.limit} ${s.money} you may pay at once.`
            : `This payment would pass your spend limit of ${s.limit} ${s.money} a ${s.period} (${s.spent} ${s.money} paid); it resets at ${s.resetsAt}.`
      } Nothing was granted.`,
      meta: {
        limit: { period: s.period, limit: s.limit, spent: s.spent, resets_at: s.resetsAt, money: s.money },
        price,
        ...(s.rule ? { rule: s.rule } : {}),
      },
    }),
  /** A spend limit in money holds the player and the transaction (or one already counted) is in a currency it cannot count. */
  spendLimitUnverifiable: (currency: string | null, s: SpendStanding) =>
    new AppError({
      kind: 'forbidden',
      code: 'spend_limit_unverifiable',
      detail: `${
        currency === null ? 'The store reported no price for this transaction' : `No exchange rate converts ${currency} into ${s.money}`
      }, so it cannot be counted against your spend limit of ${s.limit} ${s.money} ${s.period === 'payment' ? 'a payment' : `a ${s.period}`} (compliance.money_rates). Nothing was granted.`,
      meta: { currency, limit: { period: s.period, limit: s.limit, money: s.money }, ...(s.rule ? { rule: s.rule } : {}) },
    }),
  notificationInvalid: (why: string) => AppError.unauthorized('notification_invalid', `The notification does not verify: ${why}. Nothing changed.`),
  credentialsInvalid: (why: string) =>
    AppError.unprocessable('google_credentials_invalid', `The key file is not a Google service-account key: ${why}.`, { pointer: '/' }),
  /** The path names no app this service knows (none, or one whose content was never loaded). */
  appNotFound: () => AppError.notFound('app_not_found', 'No such app.', { parameter: 'app_id' }),
};

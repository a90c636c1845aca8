import { z } from 'zod';
import { UuidSchema } from '@ccs/shared';
import type { OperationDoc } from '../route-doc.js';
import { PlayerStoreDocument, StoreNotificationDocument, StoreProductsDocument, StorePurchaseDocument } from '../../resources/store.js';
import { INVALID_ID, NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of store purchases and refunds (docs/store.md). */

const REFUSED_RECEIPT = [
  'the receipt does not verify: a bad or edited signature, a certificate chain that does not lead to a trusted Apple root, an expired certificate, a JWS that is not ES256 or not well formed, or a purchase token Google Play does not know (`receipt_invalid`)',
  "the receipt is another app's: its bundle id or package name (`receipt_wrong_app`)",
  "an App Store transaction of the other environment than the app's `store.apple.environment` (`receipt_wrong_environment`)",
  "a store product id no product of the app's content has (`unknown_product`, `meta.store_product_id`)",
  'a refunded, revoked or cancelled purchase (`receipt_revoked`)',
  'an `appAccountToken` (Apple) or `obfuscatedExternalAccountId` (Google) naming another player (`receipt_wrong_player`)',
  'a body that is not `{data: {type: "store_purchase", attributes: {platform: "apple", signed_transaction}}}` or `{…, attributes: {platform: "google", product_id, purchase_token}}` (`invalid_field`)',
];

/** POST /api/v1/players/me/store/purchases. */
export const verifyStorePurchase: OperationDoc = {
  operationId: 'verifyStorePurchase',
  tag: 'Store',
  summary: 'Verify a store purchase and grant it',
  description:
    "Verifies an App Store or Google Play purchase of the calling player and grants what its product gives (`store.products[].grants`: currencies and chests, times the transaction's quantity), exactly once per store transaction across every app, retry and replica. " +
    "**Apple:** `signed_transaction` is StoreKit's `Transaction.jwsRepresentation` (the App Store Server API's `signedTransactionInfo`), verified offline: the `x5c` chain up to Apple Root CA - G3, Apple's certificate OIDs, the ES256 signature, then the bundle id and environment against `store.apple`, the product, no `revocationDate`, and `appAccountToken` (when set) equal to the caller's player id. " +
    "**Google:** `product_id` and `purchase_token` are read from Google Play with the app's service account (`purchases.products.get`, then `orders.get` for the price): only a completed purchase grants, `obfuscatedExternalAccountId` (when set) must be the caller's id, and the purchase is consumed once granted. " +
    'The answer waits (a few seconds at most) until the wallet and chests applied the grants (read-your-writes), so the balances and inventory read next include them; if they take longer, it is 201 without `meta.balances` and the grants land shortly after, once. The same transaction again by the same player answers 200 with the first grant and `meta.replayed: true`. ' +
    "**Spend limits in money** (`compliance.spend_limits[].money`, e.g. the `CN` rule pack's for minors) count the player's verified store spend of the UTC day and month, refunded transactions left out, other currencies converted by `compliance.money_rates`: a transaction past one is refused (403, nothing granted, the transaction not recorded, a Google purchase not consumed), so a client checks GET /api/v1/players/me/limits before it starts a store purchase. Never cached.",
  token: 'required',
  bodyExample: {
    data: { type: 'store_purchase', attributes: { platform: 'google', product_id: 'gems_500', purchase_token: 'opaque-token-from-play-billing' } },
  },
  responses: [
    { status: 201, description: 'Verified and granted.', schema: StorePurchaseDocument, headers: NO_STORE_HEADER },
    {
      status: 200,
      description: 'This transaction was already granted to the caller: nothing granted now, the first grant again.',
      schema: StorePurchaseDocument,
      headers: NO_STORE_HEADER,
    },
  ],
  errors: {
    403: [
      "a spend limit counted in money would be passed (`spend_limit_reached`, `meta.limit = {period, limit, spent, resets_at, money}`, `meta.price`, `meta.rule` for a rule pack's), or cannot be counted: no rate of `compliance.money_rates` converts the transaction's currency (or one already counted this period) into the limit's money, or the store reported no price (`spend_limit_unverifiable`, `meta.currency`, `meta.limit = {period, limit, money}`); nothing granted",
    ],
    409: [
      'the transaction was granted to another player or in another app (`transaction_claimed`)',
      'Google Play has not completed the purchase yet (`purchase_pending`): send it again once it completes',
      'the app does not sell through that store: no `store.apple` or `store.google` in its content, or no Google service-account key (`store_not_configured`)',
    ],
    422: REFUSED_RECEIPT,
    503: [
      'Google Play was slow or down (`store_unavailable`, `Retry-After`): nothing granted; the same request later grants once',
      "Google Play refused the app's service account (`store_credentials_rejected`)",
    ],
  },
};

const appIdParam = {
  app_id: {
    schema: z.string().uuid(),
    description: "The app's id (the store sends no apikey: this path names the app).",
    example: '7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
  },
};

/** POST /api/v1/stores/apple/notifications/{app_id}. */
export const appleStoreNotification: OperationDoc = {
  operationId: 'appleStoreNotification',
  tag: 'Store',
  summary: 'App Store Server Notifications V2 (for Apple)',
  description:
    "The URL to set in App Store Connect (App Information, App Store Server Notifications, Version 2). The body is Apple's `{signedPayload}`, verified like a signed transaction (chain, OIDs, signature; else 401 and nothing changes). " +
    "`REFUND` and `REVOKE` take back what the transaction granted (by the app's `store.refunds.policy`: the unopened chests it granted are removed under `revoke_then_debt`, and its currencies are debited, below zero if spent: a debt that blocks spending that currency until credits cover it); `REFUND_REVERSED` grants it again. " +
    "Each notification once (its `notificationUUID`), in Apple's order (`signedDate`), whatever the arrival order or a race with the purchase's own grant. Other types are acknowledged and change nothing. No apikey.",
  token: 'none',
  params: appIdParam,
  bodyExample: {
    signedPayload:
      'eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlFTURDQ0E3YWdBd0lCQWdJUSJdfQ.eyJub3RpZmljYXRpb25UeXBlIjoiUkVGVU5EIiwibm90aWZpY2F0aW9uVVVJRCI6IjAwMmUxNGQ1LTUxZjUtNDUwMy1iNWE4LWMzYTFhZjY4ZWIyMCJ9.Zm9vYmFyc2lnbmF0dXJl',
  },
  responses: [{ status: 200, description: 'Taken: Apple stops sending it.', schema: StoreNotificationDocument }],
  errors: {
    400: [INVALID_ID],
    401: ['the signed payload does not verify (`notification_invalid`): nothing changes'],
    404: ['no such app (`app_not_found`)'],
    409: ['the app has no `store.apple` in its content (`store_not_configured`)'],
    422: [
      "a notification of another app's bundle (`receipt_wrong_app`) or environment (`receipt_wrong_environment`), or a body that is not `{signedPayload}` with a compact JWS (`invalid_field`)",
    ],
  },
};

/** POST /api/v1/stores/google/notifications/{app_id}. */
export const googleStoreNotification: OperationDoc = {
  operationId: 'googleStoreNotification',
  tag: 'Store',
  summary: 'Google Play real-time developer notifications (for Pub/Sub push)',
  description:
    "The push endpoint of the Pub/Sub subscription of the app's real-time developer notifications, with authentication on: its OIDC token (`Authorization: Bearer …`) must be signed by Google, for the audience and service account the app's `store.google.notifications` names (else 401 and nothing changes). " +
    "A `voidedPurchaseNotification` of a one-time product takes back what the purchase granted, once per `orderId`, by the app's refund policy. Other notifications are acknowledged and change nothing. No apikey.",
  token: 'none',
  params: appIdParam,
  bodyExample: {
    message: {
      data: 'eyJ2ZXJzaW9uIjoiMS4wIiwicGFja2FnZU5hbWUiOiJjb20uc3R1ZGlvLmdhbWUiLC4uLn0=',
      messageId: '136969346945',
      publishTime: '2026-11-28T10:00:00Z',
    },
    subscription: 'projects/studio/subscriptions/play-rtdn',
  },
  responses: [{ status: 200, description: 'Taken: Pub/Sub acknowledges the message.', schema: StoreNotificationDocument }],
  errors: {
    400: [INVALID_ID],
    401: ['no token, or one that is not a valid Google OIDC token for this subscription (`notification_invalid`): nothing changes'],
    404: ['no such app (`app_not_found`)'],
    422: [
      "a notification of another app's package (`receipt_wrong_app`), or a message that is not a developer notification (`notification_malformed`)",
      'a body that is not a Pub/Sub push `{message: {data, messageId}, subscription}` (`invalid_field`)',
    ],
    503: ["Google's keys could not be fetched (`store_unavailable`): Pub/Sub sends the message again"],
  },
};

/** PUT /api/v1/admin/store/google-credentials. */
export const adminSetGoogleCredentials: OperationDoc = {
  operationId: 'adminSetGoogleCredentials',
  tag: 'Admin',
  summary: "Set the app's Google service-account key",
  description:
    "The body is the service account's JSON key file, as the Google Cloud console downloads it (the account needs access to the app in Play Console). Its `type`, `project_id`, `private_key_id`, `private_key` and `client_email` are kept (the file's other members are not needed), stored encrypted and never shown again: the console and `GET /api/v1/admin/store/products` show only its `client_email`. A new key replaces the old. Recorded in the audit log.",
  token: 'none',
  bodyExample: {
    type: 'service_account',
    project_id: 'studio-game',
    private_key_id: 'a1b2c3',
    private_key: '-----BEGIN PRIVATE KEY-----\n…',
    client_email: 'play@studio-game.iam.gserviceaccount.com',
  },
  responses: [{ status: 204, description: 'Stored.' }],
  errors: {
    ...SECRET_KEY_ONLY,
    422: [
      'not a Google service-account key file (`google_credentials_invalid`, naming the fields; never their values)',
      'a body that is not a JSON object, or a member of the key file that is not a string (`invalid_field`)',
    ],
  },
};

/** GET /api/v1/admin/players/{id}/store. */
export const adminPlayerStore: OperationDoc = {
  operationId: 'adminPlayerStore',
  tag: 'Admin',
  summary: "A player's store purchases and refunds",
  description: 'Newest first, at most 50 of each. Never cached.',
  token: 'none',
  params: { id: { schema: UuidSchema, description: 'The player id (UUID).' } },
  responses: [{ status: 200, description: "The player's purchases and refunds.", schema: PlayerStoreDocument, headers: NO_STORE_HEADER }],
  errors: { 400: [INVALID_ID], ...SECRET_KEY_ONLY, 404: ['no such player in this app (`player_not_found`)'] },
};

/** GET /api/v1/admin/store/products. */
export const adminStoreProducts: OperationDoc = {
  operationId: 'adminStoreProducts',
  tag: 'Admin',
  summary: 'Store products with sales and refund rates',
  token: 'none',
  responses: [{ status: 200, description: "The app's products.", schema: StoreProductsDocument, headers: NO_STORE_HEADER }],
  errors: { ...SECRET_KEY_ONLY },
};

import { z } from 'zod';
import { DecimalSchema, UuidSchema } from './context.js';
import { defineEvent, defineQuery, defineSubject } from './subject.js';

/**
 * The store service's contracts (docs/store.md): verified App Store and Google Play purchases,
 * the stores' refund notifications, and what the studio's console and tools read of them.
 */

export const StorePlatformSchema = z.enum(['apple', 'google']);
export type StorePlatform = z.infer<typeof StorePlatformSchema>;

/** An amount of money as the store reported it: a decimal string and an ISO 4217 code. */
export const MoneySchema = z.object({ amount: z.string().regex(/^\d{1,15}(\.\d{1,6})?$/), currency: z.string().regex(/^[A-Z]{3}$/) });
export type Money = z.infer<typeof MoneySchema>;

/** What a verified purchase granted: currency amounts and the inventory ids of its chests. */
export const StoreGrantedSchema = z.object({
  currencies: z.array(z.object({ currency: z.string(), amount: DecimalSchema })),
  chests: z.array(z.object({ id: UuidSchema, chestTypeId: z.string() })),
});
export type StoreGranted = z.infer<typeof StoreGrantedSchema>;

/** One verified store transaction, as the API and the console show it. */
export const StorePurchaseViewSchema = z.object({
  id: UuidSchema,
  playerId: UuidSchema,
  platform: StorePlatformSchema,
  /** Apple's transactionId, Google's orderId: one grant per transaction, across every app. */
  transactionId: z.string(),
  /** The content's product id, and the store's. */
  productId: z.string(),
  storeProductId: z.string(),
  environment: z.string().nullable(),
  quantity: z.number().int().min(1),
  /** The price the store reported for the whole transaction (null where it said none). */
  price: MoneySchema.nullable(),
  purchasedAt: z.string(),
  verifiedAt: z.string(),
  /** `granted`, or `refunded` while a refund stands (a reversed refund makes it `granted` again). */
  state: z.enum(['granted', 'refunded']),
  refundedAt: z.string().nullable(),
  granted: StoreGrantedSchema,
});
export type StorePurchaseView = z.infer<typeof StorePurchaseViewSchema>;

/** A refund (or the reversal of one) as applied: what it took back or gave again. */
export const StoreRefundViewSchema = z.object({
  id: UuidSchema,
  purchaseId: UuidSchema,
  playerId: UuidSchema,
  platform: StorePlatformSchema,
  transactionId: z.string(),
  productId: z.string(),
  kind: z.enum(['refund', 'reversal']),
  /** The store's notification type (Apple `REFUND`, `REVOKE`, `REFUND_REVERSED`; Google `voided`). */
  reason: z.string(),
  policy: z.enum(['debt', 'revoke_then_debt']),
  currencies: z.array(z.object({ currency: z.string(), amount: DecimalSchema })),
  /** The chests it revoked where unopened (a refund under `revoke_then_debt`) or restores (a reversal). */
  chestIds: z.array(UuidSchema),
  at: z.string(),
});
export type StoreRefundView = z.infer<typeof StoreRefundViewSchema>;

/** The limits of a verification request's inputs (the JWS and the token are player input). */
export const SIGNED_TRANSACTION_MAX = 32 * 1024;
export const PURCHASE_TOKEN_MAX = 4096;

/**
 * A player's store purchase to verify and grant (POST /api/v1/players/me/store/purchases): an App
 * Store signed transaction (JWS), or a Google Play product id and purchase token. The caller is
 * ctx's player of ctx's app.
 */
export const VerifyStorePurchase = defineSubject(
  'store.v1.verify_purchase',
  z.discriminatedUnion('platform', [
    z.object({ platform: z.literal('apple'), signedTransaction: z.string().min(1).max(SIGNED_TRANSACTION_MAX) }),
    z.object({
      platform: z.literal('google'),
      productId: z.string().min(1).max(150),
      purchaseToken: z.string().min(1).max(PURCHASE_TOKEN_MAX),
    }),
  ]),
  z.object({
    purchase: StorePurchaseViewSchema,
    /** The caller's balances of the currencies granted, once applied (absent when the wallet had not applied them in time). */
    balances: z.array(z.object({ currency: z.string(), amount: z.string() })).optional(),
    /** True when the transaction was already granted to this player: nothing was granted now. */
    replayed: z.boolean(),
  }),
  { callers: ['gateway'] },
);

/** How a store notification was taken: applied now, seen before, not one that changes anything, or older than what was applied. */
export const NotificationOutcomeSchema = z.enum(['applied', 'duplicate', 'ignored', 'superseded']);

/** App Store Server Notifications V2 for an app: the notification's `signedPayload` (a JWS). */
export const AppleStoreNotification = defineSubject(
  'store.v1.apple_notification',
  z.object({
    appId: UuidSchema,
    signedPayload: z
      .string()
      .min(1)
      .max(60 * 1024),
  }),
  z.object({ outcome: NotificationOutcomeSchema }),
  { callers: ['gateway'] },
);

/** A Google Play real-time developer notification pushed by Pub/Sub: its Authorization header and JSON body. */
export const GoogleStoreNotification = defineSubject(
  'store.v1.google_notification',
  z.object({
    appId: UuidSchema,
    authorization: z
      .string()
      .max(16 * 1024)
      .optional(),
    body: z.unknown(),
  }),
  z.object({ outcome: NotificationOutcomeSchema }),
  { callers: ['gateway'] },
);

/** The studio's Google service-account key file (PUT /api/v1/admin/store/google-credentials): stored encrypted, never shown again. */
export const AdminSetGoogleCredentials = defineSubject(
  'store.v1.admin_set_google_credentials',
  z.object({ appId: UuidSchema, key: z.unknown() }),
  z.object({ clientEmail: z.string() }),
  { callers: ['gateway'] },
);

/** Which service account the app's Google credentials are (the console shows only this). */
export const AdminGoogleCredentials = defineQuery(
  'store.v1.admin_google_credentials',
  z.object({ appId: UuidSchema }),
  z.object({ clientEmail: z.string().nullable(), updatedAt: z.string().nullable() }),
  { callers: ['gateway'] },
);

/** A player's store purchases and refunds, newest first (the console's player page, the admin API). */
export const AdminPlayerStore = defineQuery(
  'store.v1.admin_player_store',
  z.object({ appId: UuidSchema, playerId: UuidSchema, limit: z.number().int().min(1).max(100).default(50) }),
  z.object({ purchases: z.array(StorePurchaseViewSchema), refunds: z.array(StoreRefundViewSchema) }),
  { callers: ['gateway'] },
);

/** Each product of the app's content with its verified purchases, refunds and refund rate. */
export const AdminStoreProducts = defineQuery(
  'store.v1.admin_products',
  z.object({ appId: UuidSchema }),
  z.object({
    products: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        appleProductId: z.string().nullable(),
        googleProductId: z.string().nullable(),
        purchases: z.number().int().min(0),
        refunded: z.number().int().min(0),
        /** refunded / purchases (null without purchases). */
        refundRate: z.number().min(0).max(1).nullable(),
        /** Money taken per store currency, less what refunds standing returned. */
        revenue: z.array(MoneySchema),
      }),
    ),
  }),
  { callers: ['gateway'] },
);

/** Store money spent in one period: per currency as the stores reported it, and when the period ends (ISO 8601 UTC). */
const MoneyPeriodSchema = z.object({ spent: z.array(MoneySchema), resetsAt: z.string() });

/** What a player paid in verified store transactions (refunded ones left out) in the current UTC day and month. */
export const StoreMoneyTotalsSchema = z.object({ day: MoneyPeriodSchema, month: MoneyPeriodSchema });
export type StoreMoneyTotals = z.infer<typeof StoreMoneyTotalsSchema>;

/**
 * The calling player's (ctx.playerId) store spend in the current UTC day and month, by the store's
 * clock (the one its transactions are verified by): what spend limits in money count. Chests shows
 * it with the player's limits (GET /api/v1/players/me/limits).
 */
export const GetStoreMoneySpent = defineQuery('store.v1.money_spent', z.object({}), StoreMoneyTotalsSchema, { callers: ['chests'] });

/** The app's store transactions verified in [from, to), with their refunds, for the auditor's export (npm run admin -- export-audit). */
export const AdminExportStore = defineQuery(
  'store.v1.admin_audit_export',
  z.object({
    appId: UuidSchema,
    /** The period [from, to): ISO 8601 times with their offsets. */
    from: z.iso.datetime({ offset: true }),
    to: z.iso.datetime({ offset: true }),
    afterId: UuidSchema.optional(),
    limit: z.number().int().min(1).max(1000).default(500),
  }),
  z.object({ purchases: z.array(StorePurchaseViewSchema), refunds: z.array(StoreRefundViewSchema), more: z.boolean() }),
  { callers: ['admin'] },
);

/**
 * A refund applied (or a refund's reversal): the wallet takes back (gives again) the currencies,
 * below zero if they were spent (a debt), and chests removes the unopened chests listed (puts
 * back those it removed). Once per message id (the refund's id).
 */
export const StoreRefundApplied = defineEvent(
  'grants.store.refund',
  z.object({
    refundId: UuidSchema,
    appId: UuidSchema,
    playerId: UuidSchema,
    purchaseId: UuidSchema,
    kind: z.enum(['refund', 'reversal']),
    policy: z.enum(['debt', 'revoke_then_debt']),
    currencies: z.array(z.object({ currency: z.string(), amount: DecimalSchema })),
    /** Chests to revoke where still unopened (refund under revoke_then_debt), or to restore where revoked (reversal). */
    chestIds: z.array(UuidSchema),
  }),
  { publishers: ['store'] },
);

import { z } from 'zod';
import { DecimalSchema, SignedDecimalSchema, UuidSchema, type StorePurchaseView, type StoreRefundView } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, NoRelationships, Timestamp } from './jsonapi.js';

/**
 * Response schemas of store purchases and refunds (docs/store.md), each with the function that
 * renders it from the store service's reply, typed by the schema itself.
 */

const Money = z
  .object({
    amount: z.string().describe('A decimal string, as the store reported it, e.g. `"4.99"`.'),
    currency: z.string().describe('ISO 4217 code, e.g. `"USD"`.'),
  })
  .describe('An amount of money as the store reported it.');

const CurrencyAmount = z.object({ currency: z.string().describe('A currency code of the app, e.g. `"gems"`.'), amount: DecimalSchema });

const Granted = z
  .object({
    currencies: z.array(CurrencyAmount).describe('Each currency credited, the amount of the whole transaction (quantity included).'),
    chests: z
      .array(z.object({ id: UuidSchema.describe('The inventory chest id (open it with `/chests/{id}/open`).'), chest_type_id: UuidSchema }))
      .describe('Each chest added to the inventory (or the mailbox when full).'),
  })
  .describe('What the purchase granted.');

const StorePurchaseResource = z.object({
  type: z.literal('store_purchase'),
  id: UuidSchema.describe("The purchase's id in this service."),
  attributes: z.object({
    platform: z.enum(['apple', 'google']),
    transaction_id: z
      .string()
      .describe("The store's id of the transaction: Apple's `transactionId`, Google's `orderId`. It grants once, across every app."),
    product_id: z.string().describe("The product of the app's content (`store.products[].id`)."),
    store_product_id: z.string().describe("The store's product id (`apple_product_id` or `google_product_id`)."),
    environment: z.string().nullable().describe('Apple: `Production` or `Sandbox`; Google: `Production`, or `Test` for a licence tester.'),
    quantity: Count.describe('Units bought in the transaction (what it grants is multiplied by it).'),
    price: Money.nullable().describe('The price of the whole transaction as the store reported it (null where it reported none).'),
    purchased_at: Timestamp,
    verified_at: Timestamp,
    state: z.enum(['granted', 'refunded']).describe('`refunded` while a refund of the store stands (a reversed refund makes it `granted` again).'),
    refunded_at: Timestamp.nullable(),
  }),
  relationships: NoRelationships,
});

/** A purchase's resource, from the store's view of it. */
export function storePurchaseResource(p: StorePurchaseView): z.infer<typeof StorePurchaseResource> {
  return {
    type: 'store_purchase',
    id: p.id,
    attributes: {
      platform: p.platform,
      transaction_id: p.transactionId,
      product_id: p.productId,
      store_product_id: p.storeProductId,
      environment: p.environment,
      quantity: p.quantity,
      price: p.price,
      purchased_at: p.purchasedAt,
      verified_at: p.verifiedAt,
      state: p.state,
      refunded_at: p.refundedAt,
    },
    relationships: {},
  };
}

const grantedOf = (p: StorePurchaseView): z.infer<typeof Granted> => ({
  currencies: p.granted.currencies,
  chests: p.granted.chests.map((c) => ({ id: c.id, chest_type_id: c.chestTypeId })),
});

/** The answer to a verified purchase: the transaction, what it granted and the balances after. */
export const StorePurchaseDocument = component(
  'StorePurchaseDocument',
  'A verified store purchase, what it granted (`meta.grants`) and, once the wallet applied them, the balances of the currencies granted (`meta.balances`).',
  z.object({
    data: StorePurchaseResource,
    meta: z.object({
      grants: Granted,
      balances: z
        .record(z.string(), SignedDecimalSchema)
        .optional()
        .describe("The caller's balance of each currency granted, after the grant (absent when the wallet had not applied it yet)."),
      replayed: z
        .boolean()
        .describe('True when this transaction was already granted to the caller: nothing was granted now, this is the first grant.'),
    }),
  }),
);

export function storePurchaseDocument(r: { purchase: StorePurchaseView; balances?: { currency: string; amount: string }[]; replayed: boolean }) {
  return {
    data: storePurchaseResource(r.purchase),
    meta: {
      grants: grantedOf(r.purchase),
      ...(r.balances ? { balances: Object.fromEntries(r.balances.map((b) => [b.currency, b.amount])) } : {}),
      replayed: r.replayed,
    },
  } satisfies z.infer<typeof StorePurchaseDocument>;
}

/** What a store notification did. */
export const StoreNotificationDocument = component(
  'StoreNotificationDocument',
  'The notification was taken (the store stops sending it): `meta.outcome` says what it did.',
  z.object({
    meta: z.object({
      outcome: z
        .enum(['applied', 'duplicate', 'ignored', 'superseded'])
        .describe(
          '`applied`: it took back (or gave again) what the purchase granted, or was recorded for a transaction not yet claimed; `duplicate`: taken before; `ignored`: a type that changes nothing; `superseded`: older than a notice already applied.',
        ),
    }),
  }),
);

const StoreRefundResource = z.object({
  type: z.literal('store_refund'),
  id: UuidSchema,
  attributes: z.object({
    purchase_id: UuidSchema,
    platform: z.enum(['apple', 'google']),
    transaction_id: z.string(),
    product_id: z.string(),
    kind: z.enum(['refund', 'reversal']).describe('`refund`: taken back; `reversal`: the store reversed a refund, given again.'),
    reason: z.string().describe("The store's notification: Apple `REFUND`, `REVOKE`, `REFUND_REVERSED`; Google `voided`."),
    policy: z.enum(['debt', 'revoke_then_debt']),
    currencies: z.array(CurrencyAmount),
    chest_ids: z.array(UuidSchema).describe('Chests revoked where unopened (a refund under `revoke_then_debt`) or restored (a reversal).'),
    at: Timestamp,
  }),
  relationships: NoRelationships,
});

export function storeRefundResource(r: StoreRefundView): z.infer<typeof StoreRefundResource> {
  return {
    type: 'store_refund',
    id: r.id,
    attributes: {
      purchase_id: r.purchaseId,
      platform: r.platform,
      transaction_id: r.transactionId,
      product_id: r.productId,
      kind: r.kind,
      reason: r.reason,
      policy: r.policy,
      currencies: r.currencies,
      chest_ids: r.chestIds,
      at: r.at,
    },
    relationships: {},
  };
}

/** A player's store purchases and refunds (the admin API). */
export const PlayerStoreDocument = component(
  'PlayerStoreDocument',
  "A player's store purchases, newest first (`data`), and the refunds and reversals applied to them (`included`).",
  z.object({
    data: z.array(StorePurchaseResource),
    included: z.array(StoreRefundResource),
    meta: z.object({ player_id: UuidSchema, purchases: Count, refunds: Count }),
  }),
);

/** The app's products with their sales and refund rates (the admin API). */
export const StoreProductsDocument = component(
  'StoreProductsDocument',
  "Each product of the app's store content with its verified purchases, those refunded now, the refund rate and the money taken per store currency (refunded purchases left out).",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('store_product'),
        id: z.string(),
        attributes: z.object({
          name: z.string(),
          apple_product_id: z.string().nullable(),
          google_product_id: z.string().nullable(),
          purchases: Count,
          refunded: Count,
          refund_rate: z.number().min(0).max(1).nullable().describe('refunded ÷ purchases; null without purchases.'),
          revenue: z.array(Money),
        }),
        relationships: NoRelationships,
      }),
    ),
    meta: z.object({
      google_client_email: z.string().nullable().describe("The service account of the app's Google credentials (the key itself is never shown)."),
    }),
  }),
);

/** What `PlayerStoreDocument` describes, as the gateway renders it. */
export type PlayerStoreDocument = z.output<typeof PlayerStoreDocument>;
/** What `StoreProductsDocument` describes, as the gateway renders it. */
export type StoreProductsDocument = z.output<typeof StoreProductsDocument>;

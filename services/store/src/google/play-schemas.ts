import { z } from 'zod';

/**
 * The Google Play Developer API's answers, as its reference documents them (androidpublisher v3).
 * Strict about the fields the store reads, lenient about the rest (unknown fields are dropped,
 * fields Google adds later change nothing).
 */

/** An int64 as Google's JSON carries it (a decimal string; a number is accepted too). */
const Int64 = z.union([z.string().regex(/^-?\d{1,19}$/), z.number().int()]).transform((v) => Number(v));

/** purchases.products.get: a ProductPurchase resource (an in-app product purchase's state). */
export const ProductPurchaseSchema = z.object({
  kind: z.string().optional(),
  /** 0 purchased, 1 canceled, 2 pending. */
  purchaseState: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  /** 0 yet to be consumed, 1 consumed. */
  consumptionState: z.union([z.literal(0), z.literal(1)]),
  /** 0 yet to be acknowledged, 1 acknowledged. */
  acknowledgementState: z.union([z.literal(0), z.literal(1)]).optional(),
  orderId: z.string().min(1).max(256).optional(),
  purchaseTimeMillis: Int64,
  /** Set only for a purchase outside the standard flow: 0 test (license tester), 1 promo, 2 rewarded. */
  purchaseType: z.number().int().optional(),
  /** Absent means 1. */
  quantity: z.number().int().positive().optional(),
  refundableQuantity: z.number().int().nonnegative().optional(),
  obfuscatedExternalAccountId: z.string().max(256).optional(),
  obfuscatedExternalProfileId: z.string().max(256).optional(),
  regionCode: z.string().max(8).optional(),
  productId: z.string().optional(),
  purchaseToken: z.string().optional(),
});

/**
 * google.type.Money: whole `units` (int64) and `nanos` (10^-9 units, between -999,999,999 and
 * +999,999,999, of the same sign as units when units is not zero) of an ISO 4217 currency.
 */
export const MoneySchema = z.object({
  currencyCode: z.string().regex(/^[A-Z]{3}$/),
  units: z
    .union([z.string().regex(/^-?\d{1,19}$/), z.number().int()])
    .optional()
    .transform((v) => BigInt(v ?? 0)),
  nanos: z.number().int().min(-999_999_999).max(999_999_999).optional().default(0),
});
export type Money = z.infer<typeof MoneySchema>;

/** orders.get: an Order resource; the store reads its id, state and `total` (what the buyer paid, after discounts and taxes). */
export const OrderSchema = z.object({
  orderId: z.string().min(1).max(256),
  purchaseToken: z.string().optional(),
  /** STATE_UNSPECIFIED, PENDING, PROCESSED, CANCELED, PENDING_REFUND, PARTIALLY_REFUNDED, REFUNDED... */
  state: z.string().max(64).optional(),
  total: MoneySchema,
  tax: MoneySchema.optional(),
});

/** A Money amount as a plain decimal string ("4.99", "-1.75", "5"); undefined when units and nanos disagree in sign. */
export function decimalOf(money: Money): string | undefined {
  const { units, nanos } = money;
  if ((units > 0n && nanos < 0) || (units < 0n && nanos > 0)) return undefined;
  const negative = units < 0n || nanos < 0;
  const whole = (units < 0n ? -units : units).toString();
  const fraction = String(Math.abs(nanos)).padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

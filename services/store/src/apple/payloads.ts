import { z } from 'zod';

/**
 * The decoded payloads of App Store JWS data the store service reads, after verifyAppleJws: a
 * transaction (JWSTransactionDecodedPayload) and a Server Notification V2
 * (responseBodyV2DecodedPayload). Fields Apple adds or that the service does not read are
 * accepted and dropped; the fields it relies on are checked strictly.
 */

/** A UNIX time in milliseconds, as Apple writes every date. */
const millis = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** An identifier Apple assigns (transaction ids are decimal strings): printable, no spaces, bounded. */
const appleId = z.string().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 printable characters without spaces');
/** A UUID in any case, read in lowercase (the form the service stores ids in). */
const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID')
  .transform((s) => s.toLowerCase());
/** A signed JWS nested in a notification, verified on its own later. */
const nestedJws = z
  .string()
  .min(1)
  .max(32 * 1024);

/** Notifications that take back what a transaction granted (refunded; Family Sharing revoked). */
export const APPLE_CLAWBACK_NOTIFICATIONS = ['REFUND', 'REVOKE'] as const;
/** The notification that undoes a refund (Apple reversed it: the purchase stands again). */
export const APPLE_REGRANT_NOTIFICATIONS = ['REFUND_REVERSED'] as const;

export const AppleTransactionSchema = z
  .object({
    transactionId: appleId,
    originalTransactionId: appleId,
    bundleId: z.string().min(1).max(255),
    productId: z.string().min(1).max(255),
    purchaseDate: millis,
    originalPurchaseDate: millis.optional(),
    /** How many units of a consumable were bought (the price covers all of them). */
    quantity: z.number().int().min(1).max(1_000_000),
    /** The product's type (`Consumable`, `Non-Consumable`, …); any non-empty string is read, for types Apple adds. */
    type: z.string().min(1).max(64),
    /** The UUID the app attached to the purchase (the service's player id); Apple may send "" for none. */
    appAccountToken: z.union([z.literal('').transform(() => undefined), uuid]).optional(),
    /** `Production` or `Sandbox` for data Apple signs; compared with the app's own. */
    environment: z.string().min(1).max(32),
    signedDate: millis,
    /** Present when Apple refunded the transaction or revoked it from Family Sharing. */
    revocationDate: millis.optional(),
    revocationReason: z.number().int().optional(),
    revocationType: z.string().max(64).optional(),
    /** Milliunits of the price (1000 = one unit of `currency`), for all of `quantity`. */
    price: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    /** ISO 4217 alpha-3 code of `price`. */
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')
      .optional(),
    /** ISO 3166-1 alpha-3 code of the storefront's country or region. */
    storefront: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 3166-1 alpha-3 code')
      .optional(),
    storefrontId: z.string().max(32).optional(),
    inAppOwnershipType: z.string().max(64).optional(),
    transactionReason: z.string().max(64).optional(),
  })
  .refine((t) => (t.price === undefined) === (t.currency === undefined), {
    message: 'price and currency come together',
    path: ['currency'],
  });

export const AppleNotificationDataSchema = z.object({
  bundleId: z.string().min(1).max(255),
  environment: z.string().min(1).max(32),
  /** The app's Apple ID (production only). */
  appAppleId: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  bundleVersion: z.string().max(64).optional(),
  signedTransactionInfo: nestedJws.optional(),
  signedRenewalInfo: nestedJws.optional(),
});

const NEEDS_TRANSACTION: readonly string[] = [...APPLE_CLAWBACK_NOTIFICATIONS, ...APPLE_REGRANT_NOTIFICATIONS];

export const AppleNotificationSchema = z
  .object({
    /** REFUND, REVOKE, REFUND_REVERSED, CONSUMPTION_REQUEST, TEST…: any non-empty string, for types Apple adds. */
    notificationType: z.string().regex(/^[A-Z0-9_]{1,64}$/, 'must be an App Store notification type'),
    subtype: z
      .string()
      .regex(/^[A-Z0-9_]{1,64}$/, 'must be an App Store notification subtype')
      .optional(),
    /** The notification's identity: Apple sends the same one again on every retry. */
    notificationUUID: uuid,
    /** App metadata and the signed transaction; notifications of other shapes (summary, appData…) have none. */
    data: AppleNotificationDataSchema.optional(),
    signedDate: millis,
    version: z.string().max(16).optional(),
  })
  .refine((n) => !NEEDS_TRANSACTION.includes(n.notificationType) || n.data?.signedTransactionInfo !== undefined, {
    message: 'a refund, revocation or reversal names its transaction (data.signedTransactionInfo)',
    path: ['data', 'signedTransactionInfo'],
  });

/** Apple's milliunit price as a decimal string: 12990 → "12.99", 1000 → "1", 5 → "0.005". */
export function appleMilliunitsToDecimal(milliunits: number): string {
  if (!Number.isSafeInteger(milliunits) || milliunits < 0) throw new RangeError(`not a price in milliunits: ${milliunits}`);
  const whole = Math.floor(milliunits / 1000);
  const fraction = milliunits % 1000;
  if (fraction === 0) return String(whole);
  return `${whole}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}`;
}

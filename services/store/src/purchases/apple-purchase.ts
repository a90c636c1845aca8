import type { StoreContent } from '@ccs/shared';
import {
  AppleJwsError,
  appleMilliunitsToDecimal,
  AppleTransactionSchema,
  verifyAppleJws,
  type AppleJwsRefusal,
  type AppleTrust,
} from '../apple/index.js';
import { storeErrors } from '../errors.js';
import { productFor } from './products.js';
import type { VerifiedTransaction } from './verified.js';

/** What each refusal of the JWS check means to a studio's developer. */
const WHY: Record<AppleJwsRefusal, string> = {
  malformed: 'it is not a well-formed App Store JWS with an x5c certificate chain',
  algorithm: 'its algorithm is not ES256',
  chain_untrusted: 'its certificate chain does not lead to a trusted Apple root',
  certificate_expired: 'a certificate of its chain is expired or not yet valid',
  certificate_oid: "its certificates are not Apple's App Store signing certificates",
  signature: 'its signature does not match its content',
};

/** A verified App Store JWS's payload; a refusal becomes `refuse(why)` (default `receipt_invalid`). */
export async function verifiedPayload(
  jws: string,
  trust: AppleTrust,
  refuse: (why: string) => Error = (why) => storeErrors.receiptInvalid('apple', why),
): Promise<unknown> {
  try {
    return (await verifyAppleJws(jws, trust)).payload;
  } catch (err) {
    if (err instanceof AppleJwsError) throw refuse(WHY[err.reason]);
    throw err;
  }
}

/**
 * An App Store signed transaction (signedTransactionInfo) checked offline, in this order: the JWS
 * (chain to a trusted root, Apple's certificate OIDs, the signature), then the bundle id and
 * environment against the app's `store.apple`, the product against its products, no
 * revocationDate, and appAccountToken (when set) naming the calling player.
 */
export async function verifyApplePurchase(
  trust: AppleTrust,
  store: StoreContent | undefined,
  jws: string,
  playerId: string,
): Promise<VerifiedTransaction> {
  const apple = store?.apple;
  if (!store || !apple) throw storeErrors.notConfigured("the app's content has no store.apple section");
  const parsed = AppleTransactionSchema.safeParse(await verifiedPayload(jws, trust));
  if (!parsed.success) throw storeErrors.receiptInvalid('apple', 'its payload is not an App Store transaction');
  const t = parsed.data;
  if (t.bundleId !== apple.bundle_id) throw storeErrors.receiptWrongApp('apple', `bundle ${t.bundleId}`);
  if (t.environment !== apple.environment) throw storeErrors.receiptWrongEnvironment(t.environment, apple.environment);
  const product = productFor(store, 'apple', t.productId);
  if (!product) throw storeErrors.unknownProduct('apple', t.productId);
  if (t.revocationDate !== undefined) throw storeErrors.receiptRevoked('apple');
  if (t.appAccountToken !== undefined && t.appAccountToken !== playerId) throw storeErrors.receiptWrongPlayer('apple');
  return {
    platform: 'apple',
    transactionId: t.transactionId,
    storeProductId: t.productId,
    product,
    environment: t.environment,
    quantity: t.quantity,
    price: t.price !== undefined && t.currency !== undefined ? { amount: appleMilliunitsToDecimal(t.price), currency: t.currency } : null,
    purchasedAt: new Date(t.purchaseDate),
    purchaseToken: null,
  };
}

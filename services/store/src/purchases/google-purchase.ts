import { createHash } from 'node:crypto';
import type { StoreContent } from '@ccs/shared';
import type { GoogleFailure, GooglePlay } from '../google/index.js';
import type { StoreDeps } from '../deps.js';
import { storeErrors } from '../errors.js';
import { googleCredentialsOf } from './google-credentials.js';
import { productFor } from './products.js';
import type { VerifiedTransaction } from './verified.js';

/**
 * The transaction id of a Google Play purchase: its orderId, or (a promo-code purchase has none)
 * a name derived from its purchase token, the same for the purchase and its voided notification.
 */
export const googleTransactionId = (orderId: string | undefined, purchaseToken: string): string =>
  orderId ?? `token:${createHash('sha256').update(purchaseToken).digest('hex')}`;

/** A failed call to Google as the client sees it: Google away → 503 with Retry-After; an unknown token → 422. */
function refusalOf(f: GoogleFailure): Error {
  switch (f.kind) {
    case 'unavailable':
      return storeErrors.unavailable(f.retryAfterSeconds ?? 5);
    case 'not_found':
    case 'invalid':
      return storeErrors.receiptInvalid('google', 'Google Play knows no such purchase of this product');
    case 'credentials_rejected':
      return storeErrors.credentialsRejected();
    case 'malformed':
      return storeErrors.unavailable(5);
  }
}

/**
 * A Google Play purchase checked with Google itself (purchases.products.get with the app's service
 * account; then orders.get for its price): the product must be one of the app's, the purchase
 * completed (purchaseState 0: a cancelled one is `receipt_revoked`, a pending one 409
 * `purchase_pending`), and obfuscatedExternalAccountId (when set) the calling player. Nothing is
 * granted here; Google slow or down answers 503 `store_unavailable`.
 */
export async function verifyGooglePurchase(
  deps: StoreDeps,
  google: GooglePlay,
  appId: string,
  store: StoreContent | undefined,
  req: { productId: string; purchaseToken: string },
  playerId: string,
): Promise<VerifiedTransaction> {
  const settings = store?.google;
  if (!store || !settings) throw storeErrors.notConfigured("the app's content has no store.google section");
  const product = productFor(store, 'google', req.productId);
  if (!product) throw storeErrors.unknownProduct('google', req.productId);
  const credentials = await googleCredentialsOf(deps, appId);
  if (!credentials) throw storeErrors.notConfigured('no Google service-account key is set (PUT /api/v1/admin/store/google-credentials)');
  const client = google.client(credentials);
  const read = await client.getProductPurchase(settings.package_name, req.productId, req.purchaseToken);
  if (!read.ok) throw refusalOf(read.error);
  const p = read.value;
  if (p.state === 'cancelled') throw storeErrors.receiptRevoked('google');
  if (p.state === 'pending') throw storeErrors.purchasePending();
  if (p.obfuscatedExternalAccountId !== undefined && p.obfuscatedExternalAccountId.toLowerCase() !== playerId)
    throw storeErrors.receiptWrongPlayer('google');
  let price: VerifiedTransaction['price'] = null;
  if (p.orderId !== undefined) {
    const order = await client.getOrder(settings.package_name, p.orderId);
    if (order.ok) price = { amount: order.value.price, currency: order.value.currency };
    else if (order.error.kind !== 'not_found') throw refusalOf(order.error);
  }
  return {
    platform: 'google',
    transactionId: googleTransactionId(p.orderId, req.purchaseToken),
    storeProductId: req.productId,
    product,
    environment: p.purchaseType === 0 ? 'Test' : 'Production',
    quantity: p.quantity,
    price,
    purchasedAt: new Date(p.purchaseTimeMillis),
    purchaseToken: req.purchaseToken,
  };
}

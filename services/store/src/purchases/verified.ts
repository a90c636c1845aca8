import type { Money, StorePlatform, StoreProduct } from '@ccs/shared';

/**
 * A store transaction whose proof checked out (an App Store JWS verified offline, or Google Play's
 * own answer), for the caller's app and player, naming a product of the app: what the claim grants.
 */
export interface VerifiedTransaction {
  platform: StorePlatform;
  /** Apple's transactionId, Google's orderId. */
  transactionId: string;
  storeProductId: string;
  product: StoreProduct;
  environment: string | null;
  quantity: number;
  price: Money | null;
  purchasedAt: Date;
  /** Google: the token to consume once granted. */
  purchaseToken: string | null;
}

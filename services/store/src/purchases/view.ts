import type { StorePurchaseView } from '@ccs/shared';
import type { PurchaseRow } from '../repositories/purchases-repo.js';

/** A claimed transaction (it has a player, a product and its grants) as the API shows it. */
export function purchaseView(p: PurchaseRow): StorePurchaseView {
  const verifiedAt = (p.verifiedAt ?? new Date(0)).toISOString();
  return {
    id: p.id,
    playerId: p.playerId!,
    platform: p.platform,
    transactionId: p.transactionId,
    productId: p.productId ?? p.storeProductId,
    storeProductId: p.storeProductId,
    environment: p.environment,
    quantity: p.quantity,
    price: p.price,
    purchasedAt: (p.purchasedAt ?? p.verifiedAt ?? new Date(0)).toISOString(),
    verifiedAt,
    state: p.state === 'refunded' ? 'refunded' : 'granted',
    refundedAt: p.state === 'refunded' && p.refundedAt ? p.refundedAt.toISOString() : null,
    granted: p.granted ?? { currencies: [], chests: [] },
  };
}

import { randomUUID } from 'node:crypto';
import { chestTypeId, type StoreContent, type StoreGranted, type StorePlatform, type StoreProduct } from '@ccs/shared';

/** The product of the app's store content that a store's product id names, if any. */
export function productFor(store: StoreContent, platform: StorePlatform, storeProductId: string): StoreProduct | undefined {
  const key = platform === 'apple' ? 'apple_product_id' : 'google_product_id';
  return store.products.find((p) => p[key] === storeProductId);
}

/**
 * What `quantity` units of a product grant: each currency amount times the quantity, and one
 * inventory chest (a new id, of the chest type's catalog id) per chest of each line, times the quantity.
 */
export function grantsOf(appId: string, product: StoreProduct, quantity: number): StoreGranted {
  const currencies = Object.entries(product.grants.currencies ?? {}).map(([currency, amount]) => ({ currency, amount: String(amount * quantity) }));
  const chests = (product.grants.chests ?? []).flatMap((line) =>
    Array.from({ length: line.quantity * quantity }, () => ({ id: randomUUID(), chestTypeId: chestTypeId(appId, line.chest) })),
  );
  return { currencies, chests };
}

/** Currency amounts as every webhook event writes them: decimal strings with two places (`"500.00"`). */
export function eventAmounts(currencies: StoreGranted['currencies']): StoreGranted['currencies'] {
  return currencies.map((c) => ({ currency: c.currency, amount: Number(c.amount).toFixed(2) }));
}

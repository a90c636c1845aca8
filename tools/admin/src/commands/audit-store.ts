import { AdminExportStore, AppError, type ReplyOf, type StorePurchaseView, type StoreRefundView } from '@ccs/shared';
import { AdminFailure, adminCall, type AdminContext } from '../output.js';
import type { JsonLinesFile } from './audit-files.js';

// The store part of the auditor's export: store-transactions.jsonl, one line per App Store or
// Google Play transaction verified in the period, with the refunds and reversals applied to it.

/** Transactions asked per page (the store answers at most 1000). */
const PAGE = 500;

type StorePage = ReplyOf<typeof AdminExportStore>;

/** Counts of the store transactions written, for the manifest. */
export interface StoreCounts {
  store_transactions: number;
  /** Of them, those refunded now (a refund stands: not reversed). */
  store_refunded: number;
  /** Refunds and reversals applied to them (up to the export). */
  store_refunds: number;
}

/** One page of the period's transactions after `afterId` (id order), from the store service. */
export async function storePage(c: AdminContext, appId: string, period: { from: string; to: string }, afterId?: string): Promise<StorePage> {
  try {
    return await c.bus.request(AdminExportStore, { appId, ...period, limit: PAGE, ...(afterId ? { afterId } : {}) }, adminCall(), {
      timeoutMs: 30_000,
    });
  } catch (err) {
    if (err instanceof AppError && (err.kind === 'unavailable' || err.kind === 'overloaded' || err.kind === 'timeout'))
      throw new AdminFailure('The store service did not answer: start the stack with `npm start`.');
    throw err;
  }
}

/** A refund as a line's `refunds` item (snake_case, as the admin API names the fields). */
const refundItem = (r: StoreRefundView) => ({
  refund_id: r.id,
  kind: r.kind,
  reason: r.reason,
  policy: r.policy,
  currencies: r.currencies,
  chest_ids: r.chestIds,
  at: r.at,
});

/** One transaction as a line of store-transactions.jsonl, its refunds oldest first. */
export const storeLine = (p: StorePurchaseView, refunds: StoreRefundView[]) => ({
  purchase_id: p.id,
  player_id: p.playerId,
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
  granted: {
    currencies: p.granted.currencies,
    chests: p.granted.chests.map((ch) => ({ id: ch.id, chest_type_id: ch.chestTypeId })),
  },
  refunds: refunds.map(refundItem),
});

/**
 * Streams the period's store transactions, page by page from `first` (asked before anything was
 * written), into store-transactions.jsonl; answers the counts.
 */
export async function writeStoreTransactions(
  c: AdminContext,
  appId: string,
  period: { from: string; to: string },
  first: StorePage,
  file: JsonLinesFile,
): Promise<StoreCounts> {
  const counts: StoreCounts = { store_transactions: 0, store_refunded: 0, store_refunds: 0 };
  let page = first;
  for (;;) {
    const byPurchase = new Map<string, StoreRefundView[]>();
    for (const r of page.refunds) byPurchase.set(r.purchaseId, [...(byPurchase.get(r.purchaseId) ?? []), r]);
    for (const p of page.purchases) {
      const refunds = byPurchase.get(p.id) ?? [];
      await file.write(storeLine(p, refunds));
      counts.store_transactions++;
      counts.store_refunds += refunds.length;
      if (p.state === 'refunded') counts.store_refunded++;
    }
    const last = page.purchases.at(-1);
    if (!page.more || !last) return counts;
    page = await storePage(c, appId, period, last.id);
  }
}

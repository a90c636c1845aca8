import { AdminExportStore, AdminGoogleCredentials, AdminPlayerStore, AdminSetGoogleCredentials, AdminStoreProducts, endpoint } from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import { setGoogleCredentials } from '../purchases/google-credentials.js';
import { purchaseView } from '../purchases/view.js';
import { findGoogleCredentials } from '../repositories/credentials-repo.js';
import { playerPurchases, productTotals, purchasesBetween } from '../repositories/purchases-repo.js';
import { playerRefunds, refundsOfPurchases } from '../repositories/refunds-repo.js';

/** The studio's reads and settings of the store: credentials, a player's purchases, the products' refund rates, the audit export. */
export function adminEndpoints(deps: StoreDeps) {
  return [
    endpoint(AdminSetGoogleCredentials, async (req) => ({ clientEmail: await setGoogleCredentials(deps, req.appId, req.key) })),
    endpoint(AdminGoogleCredentials, async (req) => {
      const row = await findGoogleCredentials(deps.pool, req.appId);
      return { clientEmail: row?.clientEmail ?? null, updatedAt: row?.updatedAt.toISOString() ?? null };
    }),
    endpoint(AdminPlayerStore, async (req) => {
      const [purchases, refunds] = await Promise.all([
        playerPurchases(deps.pool, req.appId, req.playerId, req.limit),
        playerRefunds(deps.pool, req.appId, req.playerId, req.limit),
      ]);
      return { purchases: purchases.map(purchaseView), refunds };
    }),
    endpoint(AdminStoreProducts, async (req) => {
      const [snapshot, totals] = await Promise.all([deps.content.current(req.appId), productTotals(deps.pool, req.appId)]);
      const products = (snapshot?.store?.products ?? []).map((p) => {
        const t = totals.get(p.id) ?? { purchases: 0, refunded: 0, revenue: [] };
        return {
          id: p.id,
          name: p.name,
          appleProductId: p.apple_product_id ?? null,
          googleProductId: p.google_product_id ?? null,
          purchases: t.purchases,
          refunded: t.refunded,
          refundRate: t.purchases ? t.refunded / t.purchases : null,
          revenue: t.revenue,
        };
      });
      return { products };
    }),
    endpoint(AdminExportStore, async (req) => {
      const page = await purchasesBetween(deps.pool, req.appId, new Date(req.from), new Date(req.to), req.afterId ?? null, req.limit + 1);
      const purchases = page.slice(0, req.limit);
      const refunds = await refundsOfPurchases(
        deps.pool,
        req.appId,
        purchases.map((p) => p.id),
      );
      return { purchases: purchases.map(purchaseView), refunds, more: page.length > req.limit };
    }),
  ];
}

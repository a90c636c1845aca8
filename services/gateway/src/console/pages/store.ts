import type { FastifyInstance } from 'fastify';
import { StoreProductsDocument } from '../../resources/store.js';
import { html, type SafeHtml } from '../html.js';
import { notice, pct, stat, table } from '../layout.js';
import { signedIn } from '../signed-in.js';
import { money } from './player-store.js';

type Products = StoreProductsDocument;
type Product = Products['data'][number];

/** A refund rate in percent, or a dash without purchases. */
const rate = (r: number | null) => (r === null ? '—' : `${pct(r)} %`);

/** Whose Google credentials the app has: the service account's email only (the key is never shown), or that none is set. */
function googleAccount(email: string | null): SafeHtml {
  return email
    ? html`<p>
        Google Play service account: <code data-testid="google-client-email">${email}</code>
        <small class="muted">(its key is stored encrypted and never shown; a new one replaces it)</small>
      </p>`
    : notice(
        'info',
        html`<span data-testid="google-no-credentials"
          >No Google service-account key is set: Google Play purchases are refused (<code>store_not_configured</code>) until one is set with
          <code>PUT /api/v1/admin/store/google-credentials</code>.</span
        >`,
      );
}

/** The products' figures summed: purchases, refunded now, and the refund rate over all of them. */
function totals(list: Product[]): SafeHtml {
  const purchases = list.reduce((n, p) => n + p.attributes.purchases, 0);
  const refunded = list.reduce((n, p) => n + p.attributes.refunded, 0);
  return html`<section class="stats">
    ${stat('Products', list.length, 'store-products-count')} ${stat('Purchases', purchases, 'store-purchases')}
    ${stat('Refunded', refunded, 'store-refunded')} ${stat('Refund rate', rate(purchases ? refunded / purchases : null), 'store-refund-rate', 'text')}
  </section>`;
}

/** A product's ids in each store it is sold in, one line each. */
const storeIds = (a: Product['attributes']) => {
  const ids = [
    a.apple_product_id ? html`App Store <code>${a.apple_product_id}</code>` : '',
    a.google_product_id ? html`Google Play <code>${a.google_product_id}</code>` : '',
  ].filter((x) => x !== '');
  return ids.length ? html`${ids.map((x, i) => html`${i ? html`<br />` : ''}${x}`)}` : '—';
};

/** One row per product: its store ids, purchases, refunded, refund rate and revenue per currency. */
const productsTable = (list: Product[]) =>
  table(
    [
      { label: 'Product', key: true },
      { label: 'Store ids', wrap: true },
      'Purchases',
      'Refunded',
      { label: 'Refund rate', key: true },
      { label: 'Revenue', wrap: true },
    ],
    list.map((p) => {
      const a = p.attributes;
      return [
        html`${a.name} <small class="muted">(${p.id})</small>`,
        storeIds(a),
        html`<span data-testid="purchases-${p.id}">${a.purchases}</span>`,
        html`<span data-testid="refunded-${p.id}">${a.refunded}</span>`,
        html`<span data-testid="refund-rate-${p.id}">${rate(a.refund_rate)}</span>`,
        html`<span data-testid="revenue-${p.id}">${a.revenue.map(money).join(', ') || '—'}</span>`,
      ];
    }),
    'store-products',
  );

/** The store page: the Google account, the totals and the products (GET /api/v1/admin/store/products). */
export function storeBody(doc: Products): SafeHtml {
  return html`${googleAccount(doc.meta.google_client_email)}
  ${
    doc.data.length
      ? html`${totals(doc.data)}
          <h2>Products</h2>
          ${productsTable(doc.data)}
          <p class="muted">
            Revenue is the money the stores reported for purchases that stand, per currency (refunded ones left out); the refund rate is refunded ÷
            purchases. A player's purchases and refunds are on their page (Players).
          </p>`
      : notice('empty', "This app sells nothing in the stores: its content has no store products (the content's store.products).")
  }`;
}

/** GET /console/store: the app's store products with their sales and refund rates. */
export function storeRoutes(app: FastifyInstance) {
  app.get(
    '/store',
    signedIn(async (p) => {
      const a = await p.api({ method: 'get', path: '/api/v1/admin/store/products', success: 200, shape: StoreProductsDocument });
      if (!a.ok) return p.failed('Store', '/console/store', a);
      return p.view('Store', '/console/store', storeBody(a.doc));
    }),
  );
}

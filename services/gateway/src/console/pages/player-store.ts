import { errorLines, type ApiAnswer } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { notice, table, when } from '../layout.js';
import type { PlayerStoreDocument } from '../../resources/store.js';
import type { AdminPlayerDocument } from '../../resources/studio-player-view.js';

type StoreDoc = PlayerStoreDocument;
type Purchase = StoreDoc['data'][number];
type Refund = StoreDoc['included'][number];
type Balance = AdminPlayerDocument['data']['attributes']['balances'][number];

/** A balance below zero: a store refund took back currency the player had spent. */
export const inDebt = (b: Pick<Balance, 'amount'>) => b.amount.trim().startsWith('-');

/** What a debt is owed: the balance without its sign. */
const owed = (amount: string) => amount.trim().replace(/^-/, '');

/**
 * The currencies the player is in debt in, said at the top of their page: what is owed and what
 * it blocks (every spend of that currency, until credits bring it back to zero). Nothing without debt.
 */
export function debtNotice(balances: Balance[]): SafeHtml {
  const debts = balances.filter(inDebt);
  if (debts.length === 0) return html``;
  return notice(
    'warning',
    html`<strong>In debt</strong>: owes
      ${debts.map((b, i) => html`${i ? ', ' : ''}<span data-testid="debt-${b.code}">${owed(b.amount)} ${b.code}</span>`)}. A store refund took back
      currency the player had already spent; every spend of it is refused (<code>currency_in_debt</code>) until credits bring the balance back to
      zero.`,
  );
}

/** A balance's cell: a debt in red, marked as such. */
export const balanceCell = (b: Balance) =>
  inDebt(b)
    ? html`<span class="debt" data-testid="balance-${b.code}">${b.amount}</span> <mark class="debt-mark">debt</mark>`
    : html`<span data-testid="balance-${b.code}">${b.amount}</span>`;

/** Money as the store reported it: `4.99 USD`. */
export const money = (m: { amount: string; currency: string } | null) => (m ? `${m.amount} ${m.currency}` : '—');

/** Currency amounts: `500 gems, 1000 coins`. */
const amounts = (list: { currency: string; amount: string }[]) => list.map((c) => `${c.amount} ${c.currency}`).join(', ');

/** What a refund took back (a refund) or gave again (a reversal): currencies, then the chests. */
export function refundEffect(r: Refund['attributes']): string {
  const back = r.kind === 'refund';
  const parts: string[] = [];
  if (r.currencies.length) parts.push(`${back ? 'took back' : 'gave again'} ${amounts(r.currencies)}`);
  const n = r.chest_ids.length;
  if (n) parts.push(`${n} chest${n === 1 ? '' : 's'} ${back ? 'revoked where unopened' : 'restored'}`);
  return parts.join('; ') || 'nothing';
}

/** The purchases table: newest first, as the admin API lists them. */
const purchasesTable = (list: Purchase[]) =>
  table(
    [
      'Verified',
      'Platform',
      { label: 'Product', wrap: true },
      { label: 'Transaction', wrap: true },
      { label: 'Price', key: true },
      { label: 'State', key: true },
      'Refunded',
    ],
    list.map((p) => {
      const a = p.attributes;
      return [
        when(a.verified_at),
        `${a.platform}${a.environment ? ` · ${a.environment}` : ''}`,
        html`<a href="/console/store" title="${a.store_product_id}">${a.product_id}</a>${a.quantity > 1 ? ` × ${a.quantity}` : ''}`,
        html`<code data-testid="purchase-transaction">${a.transaction_id}</code>`,
        html`<span data-testid="purchase-price">${money(a.price)}</span>`,
        a.state === 'refunded' ? html`<mark data-testid="purchase-state">refunded</mark>` : html`<span data-testid="purchase-state">granted</span>`,
        when(a.refunded_at),
      ];
    }),
    'player-store-purchases',
  );

/** The refunds and reversals table: newest first. */
const refundsTable = (list: Refund[]) =>
  table(
    ['When', { label: 'Kind', key: true }, 'Reason', 'Policy', { label: 'Transaction', wrap: true }, { label: 'Effect', key: true }],
    list.map((r) => {
      const a = r.attributes;
      return [
        when(a.at),
        html`<span data-testid="refund-kind">${a.kind}</span>`,
        html`<span data-testid="refund-reason">${a.reason}</span>`,
        a.policy,
        html`<code>${a.transaction_id}</code> <small class="muted">(${a.product_id})</small>`,
        html`<span data-testid="refund-effect">${refundEffect(a)}</span>`,
      ];
    }),
    'player-store-refunds',
  );

/** The player's store purchases and refunds (GET /api/v1/admin/players/{id}/store); a failed read says so and the rest of the page stays. */
export function storeSection(a: ApiAnswer<StoreDoc>): SafeHtml {
  if (!a.ok)
    return html`<h2>Store purchases</h2>
      ${notice('error', `The store purchases could not be read: ${errorLines(a).join(' ')}`)}`;
  const d = a.doc;
  return html`<h2>Store purchases</h2>
    ${d.data.length ? purchasesTable(d.data) : notice('empty', 'No App Store or Google Play purchases.')}
    ${
      d.included.length
        ? html`<h2>Store refunds</h2>
            ${refundsTable(d.included)}`
        : ''
    }`;
}

import { errorLines, type ApiAnswer } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { notice, table, when } from '../layout.js';
import type { StudioTradeListDocument } from '../../resources/studio-trades.js';

type Trade = StudioTradeListDocument['data'][number];

/** The trades read for a player's page: the newest 50. */
export const TRADES_SHOWN = 50;

/** The longest note the admin API keeps. */
const NOTE_MAX = 500;

/** A collectible by its name in the catalog (its id when the catalog has none), with the rarity. */
const side = (s: Trade['attributes']['give'], names: Map<string, string>) => `${names.get(s.collectible_id) ?? s.collectible_id} (${s.rarity})`;

/** An open trade's cancel: the note, then the question on the next page (player-actions.ts, `cancel_trade`). */
const cancelForm = (playerId: string, t: Trade) =>
  html`<details data-testid="cancel-trade-${t.id}">
    <summary>Cancel…</summary>
    <form method="post" action="/console/players/${playerId}/actions/cancel_trade" data-testid="form-cancel-trade">
      <input type="hidden" name="trade_id" value="${t.id}" />
      <label
        >Note for the audit log
        <textarea name="note" required maxlength="${NOTE_MAX}" rows="2" placeholder="Ticket number, reason"></textarea>
      </label>
      <button type="submit" class="contrast">Cancel the trade…</button>
    </form>
  </details>`;

/**
 * The player's trades (GET /api/v1/admin/players/{id}/trades), newest first: state, the other
 * player and the player's part, what each side gives, when it was made and ended, why it ended;
 * an open one can be cancelled by support. A failed read says so and the rest of the page stays.
 */
export function tradesSection(a: ApiAnswer<StudioTradeListDocument>, playerId: string, names: Map<string, string>): SafeHtml {
  if (!a.ok)
    return html`<h2>Trades</h2>
      ${notice('error', `The trades could not be read: ${errorLines(a).join(' ')}`)}`;
  const d = a.doc;
  if (d.data.length === 0)
    return html`<h2>Trades</h2>
      ${notice('empty', 'No trades.')}`;
  const me = playerId.toLowerCase();
  const rows = d.data.map((t) => {
    const x = t.attributes;
    const offerer = t.relationships.offerer.data.id;
    const mine = offerer.toLowerCase() === me;
    const partner = mine ? t.relationships.partner.data.id : offerer;
    return [
      x.state === 'offered' ? html`<mark data-testid="trade-state">offered</mark>` : html`<span data-testid="trade-state">${x.state}</span>`,
      html`${mine ? 'offered to' : 'offered by'} <a href="/console/players/${partner}" data-testid="trade-partner">${partner}</a>`,
      html`<span data-testid="trade-give">${side(x.give, names)}</span>`,
      html`<span data-testid="trade-want">${side(x.want, names)}</span>`,
      when(x.created_at),
      when(x.ended_at),
      html`<span data-testid="trade-reason">${x.reason ?? '—'}</span>`,
      x.state === 'offered' ? cancelForm(me, t) : '',
    ];
  });
  return html`<h2>Trades</h2>
    ${table(
      [
        { label: 'State', key: true },
        { label: 'Partner', wrap: true },
        { label: 'Offerer gives', wrap: true },
        { label: 'For', wrap: true },
        'Created',
        'Ended',
        { label: 'Reason', key: true },
        '',
      ],
      rows,
      'player-trades',
    )}
    ${
      d.meta.total_count > d.data.length
        ? html`<p class="muted" data-testid="trades-more">The newest ${d.data.length} of ${d.meta.total_count} trades.</p>`
        : ''
    }`;
}

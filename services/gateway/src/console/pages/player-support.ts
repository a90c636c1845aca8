import { html, type SafeHtml } from '../html.js';
import { notice, table, when } from '../layout.js';
import type { AdminPlayerDocument } from '../../resources/studio-player-view.js';

/**
 * The parts of the player's page a support agent reads before acting (docs/console.md,
 * "Players"): the declared profile and what the compliance rules assume for what is missing, the
 * lock, the sessions, the purchases (as chests records them, not the ledger's rows) and the
 * mailbox. Trades are not part of the service: there is nothing to show of them.
 */

type Attributes = AdminPlayerDocument['data']['attributes'];
type Assumption = Attributes['profile_assumptions'][number];
type Payment = Attributes['purchases']['latest'][number];

/** What is missing, as a sentence's start. */
function missingText(missing: Assumption['missing']): string {
  if (missing.includes('birth_year') && missing.includes('country')) return 'No birth year or country declared';
  return missing.includes('birth_year') ? 'No birth year declared' : 'No country declared';
}

/** A spend limit in words: "none allowed" for a cap of 0 per payment, else "at most 50 CNY per payment". */
function limitText(l: NonNullable<Assumption['limit']>): string {
  if (l.limit === 0 && l.period === 'payment') return 'none allowed';
  return `at most ${l.limit}${l.money ? ` ${l.money}` : ''} per ${l.period}`;
}

/**
 * One assumption in words, e.g. "No birth year or country declared: the CN pack
 * (no_store_payments_under_8) treats the player as under 8 in CN for store payments: none allowed."
 */
export function assumptionLine(a: Assumption): string {
  const by = a.rule ? `the ${a.rule.pack} pack (${a.rule.rule})` : "the content's rules";
  const where = a.countries?.length && a.code !== 'blocked_in_region' ? ` in ${a.countries.join(', ')}` : '';
  const head = missingText(a.missing);
  if (a.code === 'blocked_in_region')
    return `${head}: ${by} refuse${a.rule ? 's' : ''} paid currencies on random items (blocked_in_region), since ${a.countries?.join(', ')} ${a.countries?.length === 1 ? 'is' : 'are'} blocked and the player has not said where they live.`;
  if (a.effect === 'refused')
    return `${head}: ${by} treat${a.rule ? 's' : ''} the player as under ${a.under_age}${where}: paid currencies on random items are refused (age_restricted).`;
  const what = a.limit?.money ? 'store payments' : 'paid currency spent on random items';
  return `${head}: ${by} treat${a.rule ? 's' : ''} the player as under ${a.under_age}${where} for ${what}: ${a.limit ? limitText(a.limit) : ''}.`;
}

/** The declared profile, what is assumed for what is missing, and the lock. */
export function profileSection(a: Attributes): SafeHtml {
  return html`<h2>Declared profile</h2>
    <p>
      Country <strong data-testid="player-country">${a.country ?? 'not declared'}</strong> · birth year
      <strong data-testid="player-birth-year">${a.birth_year ?? 'not declared'}</strong>
    </p>
    ${
      a.profile_assumptions.length
        ? html`<ul data-testid="player-assumptions">
            ${a.profile_assumptions.map((x) => html`<li data-testid="assumption">${assumptionLine(x)}</li>`)}
          </ul>`
        : ''
    }`;
}

/** At the top of a locked player's page: since when, and what it does. */
export const lockNotice = (a: Attributes): SafeHtml =>
  a.locked_at
    ? notice(
        'warning',
        html`<strong data-testid="player-locked">Locked</strong> since ${when(a.locked_at)}: every request with the player's token is refused
          (<code>player_locked</code>), and they cannot log in or refresh.`,
      )
    : html``;

/** The sessions: when each began and was last used, and whether it still works. */
export function sessionsSection(s: Attributes['sessions']): SafeHtml {
  return html`<h2>Sessions</h2>
    <p class="muted"><span data-testid="sessions-active">${s.active}</span> active of ${s.total}</p>
    ${
      s.latest.length
        ? table(
            ['Started', 'Last used', 'Expires', { label: 'State', key: true }],
            s.latest.map((x) => [
              when(x.created_at),
              when(x.last_used_at),
              when(x.expires_at),
              html`<span data-testid="session-state">${x.active ? 'active' : x.revoked_at ? `ended ${when(x.revoked_at)}` : 'expired'}</span>`,
            ]),
            'player-sessions',
          )
        : notice('empty', 'No sessions.')
    }`;
}

const STATUS: Record<Payment['status'], string> = {
  completed: 'completed',
  refunded: 'refunded',
  failed: 'failed',
  pending: 'under way',
  debited: 'under way',
  compensating: 'being refunded',
};

/** What a payment bought: chests by name, or the key or timer skip of a chest. */
function boughtText(p: Payment, chestNames: Map<string, string>): string {
  if (p.kind === 'purchase') return `${p.quantity ?? 1} × ${chestNames.get(p.chest_type_id ?? '') ?? p.chest_type_id}`;
  return p.kind === 'key' ? `key for chest ${p.chest_id}` : `timer skip of chest ${p.chest_id}`;
}

/** The player's purchases, keys and timer skips, the newest first. */
export function purchasesSection(list: Attributes['purchases'], chestNames: Map<string, string>): SafeHtml {
  return html`<h2>Purchases</h2>
    ${
      list.latest.length
        ? table(
            ['When', { label: 'Bought', key: true, wrap: true }, { label: 'Paid', key: true }, { label: 'Status', key: true }],
            list.latest.map((p) => [
              when(p.created_at),
              html`<span data-testid="purchase-bought">${boughtText(p, chestNames)}</span>`,
              html`<span data-testid="purchase-paid">${p.amount} ${p.currency}</span>`,
              html`<span data-testid="purchase-status">${STATUS[p.status]}</span>`,
            ]),
            'player-purchases',
          )
        : notice('empty', 'No purchases, keys or timer skips with the app’s currencies.')
    }`;
}

/** The chests waiting in the mailbox, the soonest to expire first. */
export function mailboxSection(m: Attributes['mailbox']): SafeHtml {
  return html`<h2>Mailbox</h2>
    ${
      m.items.length
        ? table(
            [{ label: 'Chest', key: true }, 'Source', 'Received', 'Expires'],
            m.items.map((i) => [html`<span data-testid="mailbox-chest">${i.name}</span>`, i.source, when(i.received_at), when(i.expires_at)]),
            'player-mailbox',
          )
        : notice('empty', 'Nothing waiting in the mailbox.')
    }`;
}

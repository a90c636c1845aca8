import type { FastifyInstance } from 'fastify';
import { ChestCatalogDocument } from '../../resources/chests.js';
import { AdminPlayerDocument } from '../../resources/studio-player-view.js';
import { errorLines, type ApiAnswer } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { errorBody, notice } from '../layout.js';
import { formOf, paramOf, signedIn, type ConsolePage } from '../signed-in.js';

/**
 * What a support agent does to a player from their page (docs/console.md, "Acting on a player"):
 * grant currency, grant chests, correct the declared profile, end every session, lock or unlock,
 * cancel an open trade of theirs (player-trades.ts).
 * Each is two steps, as removing a webhook endpoint is: the form posts here and is answered with
 * the question (what will happen, to whom, with the agent's note); only the question's own form,
 * which posts the action's name back as `confirm`, acts. The note is required and goes to the
 * admin API as `meta.note`, so the audit log keeps it with the action. No script is involved.
 */

type Player = AdminPlayerDocument['data'];
type Fields = Record<string, string>;

/** The actions, by the name in their URL. */
export const ACTIONS = ['credit', 'chests', 'profile', 'sessions', 'lock', 'unlock', 'cancel_trade'] as const;
export type ActionName = (typeof ACTIONS)[number];
const isAction = (s: string): s is ActionName => (ACTIONS as readonly string[]).includes(s);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The longest note the admin API keeps. */
const NOTE_MAX = 500;

/** What each action carries from its form to its question, besides the note. */
const FIELDS: Record<ActionName, string[]> = {
  credit: ['currency', 'amount', 'reference'],
  chests: ['chest_type', 'quantity', 'reference'],
  profile: ['country', 'birth_year'],
  sessions: [],
  lock: [],
  unlock: [],
  cancel_trade: ['trade_id'],
};

/** The title of each action's question and its button. */
const TITLES: Record<ActionName, { title: string; button: string }> = {
  credit: { title: 'Grant currency', button: 'Yes, grant it' },
  chests: { title: 'Grant chests', button: 'Yes, grant them' },
  profile: { title: 'Correct the declared profile', button: 'Yes, correct it' },
  sessions: { title: 'End every session', button: 'Yes, end them' },
  lock: { title: 'Lock the player', button: 'Yes, lock' },
  unlock: { title: 'Unlock the player', button: 'Yes, unlock' },
  cancel_trade: { title: 'Cancel a trade', button: 'Yes, cancel it' },
};

/** What the player's page says once an action is done (`?done=<action>`, `&replayed=1` for a reference granted before). */
export function doneNotice(done: string, replayed: boolean): SafeHtml {
  if (!isAction(done)) return html``;
  if (replayed) return notice('info', 'That reference had been granted before: nothing more was granted (the same grant again, as the first time).');
  const said: Record<ActionName, string> = {
    credit: 'Currency granted: the balances below include it.',
    chests: 'Chests granted: they reach the inventory within moments (the mailbox when it is full).',
    profile: 'Declared profile corrected.',
    sessions: 'Every session ended: the player must log in again once their access token expires (at most its lifetime).',
    lock: 'Player locked: every request with their token is refused from now on, and they cannot log in.',
    unlock: 'Player unlocked: their tokens and sessions work again.',
    cancel_trade: 'Trade cancelled: the escrowed copy, the stamina point and the tokens of the offer went back to the offerer.',
  };
  return notice('success', html`<span data-testid="action-done">${said[done]}</span>`);
}

const who = (p: Player) => html`<strong>${p.attributes.email ?? 'a guest'}</strong> (player <code>${p.id}</code>)`;
const orNone = (v: string | number | null | undefined) => (v === null || v === undefined || v === '' ? 'none' : String(v));

/** The question of an action: what it does, to whom, and what it cannot undo. */
function question(action: ActionName, p: Player, f: Fields, chestName: string): SafeHtml {
  switch (action) {
    case 'credit':
      return html`Grant <strong>${f.amount} ${f.currency}</strong> to ${who(p)} under the reference <code>${f.reference}</code>? A reference grants
        once: the same one again adds nothing.`;
    case 'chests':
      return html`Grant <strong>${f.quantity || '1'} × ${chestName}</strong> to ${who(p)} under the reference <code>${f.reference}</code>? They go to
        the inventory (the mailbox when it is full); the same reference again adds nothing.`;
    case 'profile':
      return html`Set the declared country of ${who(p)} to <strong>${orNone((f.country ?? '').trim().toUpperCase())}</strong> (now
        ${orNone(p.attributes.country)}) and the birth year to <strong>${orNone(f.birth_year)}</strong> (now ${orNone(p.attributes.birth_year)})? The
        compliance rules judge the player by it at once.`;
    case 'sessions':
      return html`End every session of ${who(p)} (${p.attributes.sessions.active} active)? No refresh token of theirs works any more; the access
      tokens already issued work until they expire (lock the player to stop them at once).`;
    case 'lock':
      return html`Lock ${who(p)}? Every request with their token is refused at once (403 <code>player_locked</code>) and they cannot log in or refresh
        until unlocked.`;
    case 'unlock':
      return html`Unlock ${who(p)}? Their tokens and sessions work again at once.`;
    case 'cancel_trade':
      return html`Cancel the open trade <code>${f.trade_id}</code> of ${who(p)}? It ends as <strong>cancelled by support</strong>: the escrowed copy,
        the stamina point and the tokens of the offer go back to the offerer, and both players see it cancelled. It cannot be reopened.`;
  }
}

/** The question's page: what will happen, the note, the button that acts (posting `confirm`) and a way back. */
function confirmBody(action: ActionName, p: Player, f: Fields, note: string, chestName: string, errors?: string[]): SafeHtml {
  return html`${errors ? errorBody(errors) : ''}
    ${notice(
      'warning',
      html`<p data-testid="confirm-question">${question(action, p, f, chestName)}</p>
        <p class="muted">Note for the audit log: <span data-testid="confirm-note">${note}</span></p>`,
    )}
    <div class="actions">
      <form method="post" action="/console/players/${p.id}/actions/${action}" class="inline" data-testid="confirm-action">
        ${FIELDS[action].map((name) => html`<input type="hidden" name="${name}" value="${f[name] ?? ''}" />`)}
        <input type="hidden" name="note" value="${note}" />
        <input type="hidden" name="confirm" value="${action}" />
        <button type="submit" class="${action === 'lock' || action === 'sessions' || action === 'cancel_trade' ? 'contrast' : ''}">
          ${TITLES[action].button}
        </button>
      </form>
      <a href="/console/players/${p.id}" role="button" class="secondary outline" data-testid="cancel-action">Back to the player</a>
    </div>`;
}

/** A JSON:API body of the action's fields, with the note as `meta.note`. */
function bodyOf(action: ActionName, f: Fields, note: string): unknown {
  const meta = { note };
  const text = (name: string) => (f[name] ?? '').trim();
  // A number typed as one; anything else goes as text, for the API to refuse with its reason.
  const whole = (name: string) => (/^-?\d{1,9}$/.test(text(name)) ? Number(text(name)) : text(name));
  if (action === 'credit')
    return { data: { type: 'credit', attributes: { currency: text('currency'), amount: text('amount'), reference: f.reference } }, meta };
  if (action === 'chests') {
    const attributes = { chest_type: text('chest_type'), quantity: text('quantity') ? whole('quantity') : 1, reference: f.reference };
    return { data: { type: 'chest_grant', attributes }, meta };
  }
  if (action === 'profile') {
    const year = text('birth_year');
    return { data: { type: 'player', attributes: { country: text('country') || null, birth_year: year === '' ? null : whole('birth_year') } }, meta };
  }
  return { meta };
}

/** Calls the admin API for the action; `replayed` when a grant's reference had been granted before (answered 200). */
async function act(p: ConsolePage, action: ActionName, id: string, f: Fields, note: string): Promise<ApiAnswer<unknown> & { replayed?: boolean }> {
  const params = { id };
  const json = bodyOf(action, f, note);
  const grant = async (a: ApiAnswer<unknown>) => (!a.ok && a.status === 200 ? { ok: true as const, status: 200, doc: undefined, replayed: true } : a);
  switch (action) {
    case 'credit':
      return grant(await p.api({ method: 'post', path: '/api/v1/admin/players/{id}/credits', success: 201 }, { params, json }));
    case 'chests':
      return grant(await p.api({ method: 'post', path: '/api/v1/admin/players/{id}/chests', success: 201 }, { params, json }));
    case 'profile':
      return p.api({ method: 'patch', path: '/api/v1/admin/players/{id}', success: 200 }, { params, json });
    case 'sessions':
      return p.api({ method: 'post', path: '/api/v1/admin/players/{id}/sessions/revoke', success: 200 }, { params, json });
    case 'lock':
      return p.api({ method: 'post', path: '/api/v1/admin/players/{id}/lock', success: 200 }, { params, json });
    case 'unlock':
      return p.api({ method: 'post', path: '/api/v1/admin/players/{id}/unlock', success: 200 }, { params, json });
    case 'cancel_trade':
      return p.api({ method: 'post', path: '/api/v1/admin/trades/{id}/cancel', success: 200 }, { params: { id: f.trade_id ?? '' }, json });
  }
}

/** The chest's name as the catalog has it (the form names it by catalog id), else what was given. */
async function chestNameOf(p: ConsolePage, chest: string): Promise<string> {
  if (!chest) return chest;
  const a = await p.api({ method: 'get', path: '/api/v1/chests', success: 200, shape: ChestCatalogDocument }, { query: 'page[limit]=100' });
  return (a.ok && a.doc.data.find((c) => c.id === chest)?.attributes.name) || chest;
}

/** The form's fields of the action, as text (absent ones empty). */
function fieldsOf(action: ActionName, form: Record<string, unknown>): Fields {
  return Object.fromEntries(FIELDS[action].map((name) => [name, typeof form[name] === 'string' ? form[name] : '']));
}

/**
 * POST /console/players/:id/actions/:action. Without `confirm` naming the action: the question
 * (or, without a note, the player's page asks for one). With it: the action, then back to the
 * player's page saying it is done; a refusal shows the API's errors above the question again.
 */
async function action(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  const name = paramOf(p.request, 'action');
  if (!isAction(name) || !UUID.test(id)) return p.reply.callNotFound();
  const form = formOf(p.request);
  const f = fieldsOf(name, form);
  if (name === 'cancel_trade' && !UUID.test(f.trade_id ?? '')) return p.reply.callNotFound();
  const note = typeof form.note === 'string' ? form.note.trim() : '';
  const player = await p.api({ method: 'get', path: '/api/v1/admin/players/{id}', success: 200, shape: AdminPlayerDocument }, { params: { id } });
  if (!player.ok) return p.failed('Player', '/console/players', player);
  const title = `${TITLES[name].title}: ${player.doc.data.attributes.email ?? player.doc.data.id}`;
  const chestName = name === 'chests' ? await chestNameOf(p, f.chest_type ?? '') : '';
  if (!note || note.length > NOTE_MAX) {
    const back = html`<a href="/console/players/${player.doc.data.id}" role="button" class="secondary outline" data-testid="cancel-action"
      >Back to the player</a
    >`;
    return p.view(
      title,
      '/console/players',
      html`${notice('error', `Write a note for the audit log (1 to ${NOTE_MAX} characters): why this is done.`)} ${back}`,
    );
  }
  if (form.confirm !== name) return p.view(title, '/console/players', confirmBody(name, player.doc.data, f, note, chestName));
  const r = await act(p, name, player.doc.data.id, f, note);
  if (!r.ok && (r.status === 401 || r.status === 403)) return p.failed(title, '/console/players', r);
  if (!r.ok)
    return p.view(title, '/console/players', confirmBody(name, player.doc.data, f, note, chestName, errorLines(r)), r.status >= 500 ? 502 : r.status);
  return p.reply.redirect(`/console/players/${player.doc.data.id}?done=${name}${r.replayed ? '&replayed=1' : ''}`, 303);
}

/** The note every action's form asks for. */
const noteField = html`<label
  >Note for the audit log
  <textarea name="note" required maxlength="${NOTE_MAX}" rows="2" placeholder="Ticket number, reason"></textarea>
</label>`;

/** One action's form, folded under its title. */
const actionForm = (p: Player, action: ActionName, fields: SafeHtml, button: string) =>
  html`<details data-testid="action-${action}">
    <summary>${TITLES[action].title}</summary>
    <form method="post" action="/console/players/${p.id}/actions/${action}" data-testid="form-${action}">
      ${fields} ${noteField}
      <button type="submit" class="${action === 'lock' || action === 'sessions' ? 'contrast' : ''}">${button}</button>
    </form>
  </details>`;

/** The forms of the player's page: each asks for its note, and each is confirmed on the next page before it acts. */
export function actionsSection(p: Player, currencies: string[], chests: { id: string; name: string }[]): SafeHtml {
  const a = p.attributes;
  const reference = html`<label
    >Reference <input name="reference" required maxlength="100" placeholder="e.g. ticket-4711" />
    <small>Your id of this grant: the same reference grants once.</small></label
  >`;
  return html`<section class="player-actions" data-testid="player-actions">
    <h2>Act</h2>
    ${actionForm(
      p,
      'credit',
      html`<div class="grid">
          <label
            >Currency
            <select name="currency" required>
              ${currencies.map((c) => html`<option value="${c}">${c}</option>`)}
            </select></label
          >
          <label>Amount <input name="amount" required inputmode="decimal" placeholder="100" /></label>
        </div>
        ${reference}`,
      'Grant currency…',
    )}
    ${actionForm(
      p,
      'chests',
      html`<div class="grid">
          <label
            >Chest
            <select name="chest_type" required>
              ${chests.map((c) => html`<option value="${c.id}">${c.name}</option>`)}
            </select></label
          >
          <label>Quantity <input name="quantity" type="number" min="1" max="100" value="1" required /></label>
        </div>
        ${reference}`,
      'Grant chests…',
    )}
    ${actionForm(
      p,
      'profile',
      html`<div class="grid">
        <label
          >Country <input name="country" maxlength="2" value="${a.country ?? ''}" placeholder="none" />
          <small>ISO code, e.g. DE; empty: none.</small></label
        >
        <label
          >Birth year <input name="birth_year" type="number" min="1900" max="2100" value="${a.birth_year ?? ''}" placeholder="none" />
          <small>Empty: none.</small></label
        >
      </div>`,
      'Correct the profile…',
    )}
    ${actionForm(p, 'sessions', html``, 'End every session…')}
    ${a.locked_at ? actionForm(p, 'unlock', html``, 'Unlock…') : actionForm(p, 'lock', html``, 'Lock the player…')}
  </section>`;
}

/** The actions' route. */
export function playerActionRoutes(app: FastifyInstance) {
  app.post('/players/:id/actions/:action', signedIn(action));
}

import type { FastifyInstance } from 'fastify';
import { ChestCatalogDocument } from '../../resources/chests.js';
import { CollectibleListDocument } from '../../resources/collections.js';
import { CurrencyListDocument } from '../../resources/currencies.js';
import { PlayerStoreDocument } from '../../resources/store.js';
import { AdminPlayerListDocument } from '../../resources/studio-support.js';
import { AdminPlayerDocument } from '../../resources/studio-player-view.js';
import { html, type SafeHtml } from '../html.js';
import { chart, notice, stat, table, when } from '../layout.js';
import { formOf, queryOf, paramOf, signedIn, type ConsolePage } from '../signed-in.js';
import { actionsSection, doneNotice, playerActionRoutes } from './player-actions.js';
import { balanceCell, debtNotice, storeSection } from './player-store.js';
import { TRADES_SHOWN, tradesSection } from './player-trades.js';
import { StudioTradeListDocument } from '../../resources/studio-trades.js';
import { lockNotice, mailboxSection, profileSection, purchasesSection, sessionsSection } from './player-support.js';

type Player = AdminPlayerDocument['data'];
type StoreAnswer = Parameters<typeof storeSection>[0];
type TradesAnswer = Parameters<typeof tradesSection>[0];
type Attributes = Player['attributes'];
type LedgerEntry = Attributes['ledger']['latest'][number];

/** Names of the app's chest types (by UUID) and collectibles (by slug), from its catalog; an id not found shows as itself. */
export interface Names {
  chests: Map<string, string>;
  collectibles: Map<string, string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What a ledger row was for: the chests service debits a purchase under the purchase's id, a key
 * under `key:<id>` and a timer skip under `unlock:<id>` (and refunds each under the same
 * reference), which the wallet's reason alone (`debit`, `debit_refund`) does not say.
 */
export function ledgerLabel(e: Pick<LedgerEntry, 'reason' | 'reference'>): string {
  if (e.reason !== 'debit' && e.reason !== 'debit_refund') return e.reason;
  const ref = e.reference ?? '';
  const kind = ref.startsWith('key:') ? 'key' : ref.startsWith('unlock:') ? 'timer skip' : UUID.test(ref) ? 'purchase' : undefined;
  if (!kind) return e.reason;
  return e.reason === 'debit' ? kind : `${kind} refund`;
}

/**
 * The look-up form: an id, or the start of an email. It is posted, never sent in a URL: the
 * console keeps the email prefix in the (encrypted) session and shows its results at
 * /console/players/search, so no address or part of one is in the browser's history or a log of URLs.
 */
export const playerSearchForm = (q = '', testid = 'player-search') =>
  html`<form method="post" action="/console/players/search" role="search" data-testid="${testid}">
    <input type="search" name="q" value="${q}" placeholder="Player id, or the start of an email" aria-label="Player id or email" required />
    <button type="submit">Find</button>
  </form>`;

/** The look-up form with an error or a hint below. */
export function playerSearchBody(q: string, error?: string): SafeHtml {
  return html`${playerSearchForm(q)}
  ${error ? notice('error', error) : notice('empty', 'Find a player by id, or by the start of their email (any case).')}`;
}

/** The player's headline figures. */
const summary = (p: Player) =>
  html`<section class="stats">
      ${stat('Email', p.attributes.email ?? 'guest', 'player-email', 'wide')}
      ${stat('Unopened chests', p.attributes.inventory.total_chests, 'player-chests')}
      ${stat('Openings', p.attributes.openings.total, 'player-openings')}
      ${stat('Joined', when(p.attributes.created_at).slice(0, 10), 'player-joined', 'text')}
    </section>
    <p class="muted">
      Player <code data-testid="player-id">${p.id}</code>${p.attributes.is_anonymous ? ' · guest' : ''}${p.attributes.locked_at ? ' · locked' : ''}
    </p>`;

/** Balances beside the completion chart. */
function holdings(a: Attributes): SafeHtml {
  const collections = a.collections;
  return html`<section class="grid-2">
    <div>
      <h2>Balances</h2>
      ${table(
        ['Currency', 'Amount'],
        a.balances.map((b) => [b.code, balanceCell(b)]),
        'player-balances',
      )}
    </div>
    <div>
      <h2>Collection completion</h2>
      ${
        collections.length
          ? chart(
              'completion-chart',
              {
                type: 'bar',
                horizontal: true,
                percent: true,
                labels: collections.map((c) => c.name),
                datasets: [
                  { label: '% complete', data: collections.map((c) => (c.total_items ? Math.round((100 * c.unique_items) / c.total_items) : 0)) },
                ],
              },
              'Share of each collection the player owns.',
            )
          : notice('empty', 'This player owns no collectibles yet.')
      }
    </div>
  </section>`;
}

/** The spend limits that hold the player (in paid currency, or in money at the stores), with their standing and the rule pack behind each; nothing when none does. */
const spendLimits = (a: Attributes) =>
  a.spend_limits.length
    ? html`<h2>Spend limits</h2>
        ${table(
          ['Per', 'Counts', { label: 'Limit', key: true }, 'Spent', 'Remaining', 'Resets', { label: 'Set by', wrap: true }],
          a.spend_limits.map((l) => [
            l.period,
            l.money ? html`<span data-testid="money-${l.period}">${l.money}</span> in store purchases` : 'paid currency on random items',
            html`<span data-testid="limit-${l.period}">${l.limit}</span>`,
            html`<span data-testid="spent-${l.period}">${l.spent}</span>`,
            l.remaining,
            l.resets_at ? when(l.resets_at) : '—',
            l.rule ? html`<span title="${l.rule.source}">${l.rule.pack} rule pack: ${l.rule.rule}</span>` : 'the content',
          ]),
          'player-spend-limits',
        )}`
    : html``;

/** The ledger and the collections, as tables. */
const ledgerAndCollections = (a: Attributes) =>
  html`<h2>Ledger</h2>
    ${
      a.ledger.latest.length
        ? table(
            ['When', 'Currency', { label: 'Change', key: true }, 'Balance after', { label: 'For', key: true }, { label: 'Reference', wrap: true }],
            a.ledger.latest.map((e) => [
              when(e.at),
              e.currency,
              e.delta,
              e.balance_after,
              html`<span data-testid="ledger-label">${ledgerLabel(e)}</span>`,
              e.reference,
            ]),
            'player-ledger',
          )
        : notice('empty', 'No currency movements yet.')
    }
    <h2>Collections</h2>
    ${table(
      ['Collection', 'Owned', 'Completed'],
      a.collections.map((c) => [c.name, html`<span data-testid="owned-${c.id}">${c.unique_items}</span> / ${c.total_items}`, when(c.completed_at)]),
      'player-collections',
    )}`;

/** The unopened chests and the latest openings, chest types and items by name. */
const chestsAndOpenings = (a: Attributes, names: Names) =>
  html`<h2>Unopened chests</h2>
    ${
      a.inventory.chests.length
        ? table(
            [{ label: 'Chest', key: true }, 'Source', 'Acquired'],
            a.inventory.chests.map((c) => [c.name, c.source, when(c.acquired_at)]),
            'player-inventory',
          )
        : notice('empty', 'No unopened chests.')
    }
    <h2>Latest openings</h2>
    ${
      a.openings.latest.length
        ? table(
            ['Opened', { label: 'Chest', key: true }, 'Rules', { label: 'Items', key: true }],
            a.openings.latest.map((o) => [
              when(o.opened_at),
              html`<span data-testid="opening-chest" title="${o.chest_type_id}">${names.chests.get(o.chest_type_id) ?? o.chest_type_id}</span>`,
              `v${o.rules_version}`,
              html`<span data-testid="opening-items"
                >${o.items.map((i) => `${names.collectibles.get(i.collectible_id) ?? i.collectible_id} (${i.rarity})`).join(', ')}</span
              >`,
            ]),
            'player-openings-table',
          )
        : notice('empty', 'This player has not opened a chest yet.')
    }`;

/** What the player's page shows besides the player: the catalog's names, the store's answer, the app's currencies. */
export interface PlayerPageData {
  names: Names;
  store: StoreAnswer;
  trades: TradesAnswer;
  currencies: string[];
}

/** One player's page, from GET /api/v1/admin/players/{id}, …/store and …/trades; `done` says what was just done. */
export const playerBody = (p: Player, d: PlayerPageData, done?: SafeHtml): SafeHtml =>
  html`${playerSearchForm('', 'player-search-again')} ${done ?? ''} ${lockNotice(p.attributes)} ${debtNotice(p.attributes.balances)} ${summary(p)}
  ${profileSection(p.attributes)}
  ${actionsSection(
    p,
    d.currencies,
    [...d.names.chests].map(([id, name]) => ({ id, name })),
  )}
  ${sessionsSection(p.attributes.sessions)} ${holdings(p.attributes)} ${spendLimits(p.attributes)}
  ${purchasesSection(p.attributes.purchases, d.names.chests)} ${storeSection(d.store)} ${tradesSection(d.trades, p.id, d.names.collectibles)}
  ${ledgerAndCollections(p.attributes)} ${chestsAndOpenings(p.attributes, d.names)} ${mailboxSection(p.attributes.mailbox)}`;

/** Collectible pages read for their names (100 each): enough for any catalog the content limits allow. */
const MAX_COLLECTIBLE_PAGES = 20;

/**
 * The names of the app's chest types and collectibles, from the catalog routes the secret key may
 * read (GET /api/v1/chests, GET /api/v1/collectibles, paged). A failed read leaves its ids as
 * they are: the page still shows the player.
 */
async function namesOf(p: ConsolePage): Promise<Names> {
  const collectiblePage = (offset: number) =>
    p.api(
      { method: 'get', path: '/api/v1/collectibles', success: 200, shape: CollectibleListDocument },
      { query: `page[limit]=100&page[offset]=${offset}&fields[collectible]=name` },
    );
  const [chests, first] = await Promise.all([
    p.api({ method: 'get', path: '/api/v1/chests', success: 200, shape: ChestCatalogDocument }, { query: 'page[limit]=100' }),
    collectiblePage(0),
  ]);
  const names: Names = { chests: new Map(), collectibles: new Map() };
  if (chests.ok) for (const c of chests.doc.data) names.chests.set(c.id, c.attributes.name ?? c.id);
  if (!first.ok) return names;
  const pages = Math.min(MAX_COLLECTIBLE_PAGES, Math.ceil(first.doc.meta.total_count / 100));
  const rest = await Promise.all(Array.from({ length: Math.max(0, pages - 1) }, (_, i) => collectiblePage((i + 1) * 100)));
  for (const a of [first, ...rest]) if (a.ok) for (const c of a.doc.data) names.collectibles.set(c.id, c.attributes.name ?? c.id);
  return names;
}

/** The app's currency codes, for the grant form (none when they cannot be read: the API refuses the grant then). */
async function currenciesOf(p: ConsolePage): Promise<string[]> {
  const a = await p.api({ method: 'get', path: '/api/v1/currencies', success: 200, shape: CurrencyListDocument });
  return a.ok ? a.doc.data.flatMap((c) => (c.attributes.code ? [c.attributes.code] : [])) : [];
}

const UUID_PATH = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** GET /console/players/:id: a player by id (an email is never in a URL: the search finds players by email). */
async function playerPage(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  const unknown = () => p.view('Players', '/console/players', playerSearchBody('', 'No such player in this app.'), 404);
  if (!UUID_PATH.test(id)) return unknown();
  const [a, names, currencies] = await Promise.all([
    p.api({ method: 'get', path: '/api/v1/admin/players/{id}', success: 200, shape: AdminPlayerDocument }, { params: { id } }),
    namesOf(p),
    currenciesOf(p),
  ]);
  if (!a.ok && a.status === 404) return unknown();
  if (!a.ok) return p.failed('Player', '/console/players', a);
  const [store, trades] = await Promise.all([
    p.api({ method: 'get', path: '/api/v1/admin/players/{id}/store', success: 200, shape: PlayerStoreDocument }, { params: { id: a.doc.data.id } }),
    p.api(
      { method: 'get', path: '/api/v1/admin/players/{id}/trades', success: 200, shape: StudioTradeListDocument },
      { params: { id: a.doc.data.id }, query: `page[limit]=${TRADES_SHOWN}` },
    ),
  ]);
  const done = doneNotice(queryOf(p.request, 'done'), queryOf(p.request, 'replayed') === '1');
  return p.view(
    `Player ${a.doc.data.attributes.email ?? a.doc.data.id}`,
    '/console/players',
    playerBody(a.doc.data, { names, store, trades, currencies }, done),
  );
}

/** Players per page of a list. */
const PAGE = 20;

/** An offset from the query (`?offset=`), a multiple of nothing in particular, at least 0. */
const offsetOf = (p: ConsolePage) => Math.max(0, Math.floor(Number(queryOf(p.request, 'offset') || 0)) || 0);

type PlayerList = AdminPlayerListDocument;

/** A page of players: each linked to its page by id, with the links to the pages around it. */
export function playerList(doc: PlayerList, offset: number, base: string, testid: string): SafeHtml {
  const total = doc.meta.total_count;
  return html`${
      doc.data.length
        ? table(
            [{ label: 'Email', key: true, wrap: true }, 'Joined', { label: 'State', key: true }],
            doc.data.map((x) => [
              html`<a href="/console/players/${x.id}" data-testid="player-link">${x.attributes.email ?? `guest ${x.id}`}</a>`,
              when(x.attributes.created_at),
              x.attributes.locked_at ? html`<mark>locked</mark>` : x.attributes.is_anonymous ? 'guest' : 'registered',
            ]),
            testid,
          )
        : notice('empty', 'No players found.')
    }
    <nav aria-label="pages">
      <ul>
        ${offset > 0 ? html`<li><a href="${base}?offset=${Math.max(0, offset - PAGE)}" data-testid="page-prev">Previous</a></li>` : ''}
        ${offset + PAGE < total ? html`<li><a href="${base}?offset=${offset + PAGE}" data-testid="page-next">Next</a></li>` : ''}
        <li class="muted" data-testid="players-total">${total} players</li>
      </ul>
    </nav>`;
}

/** GET /console/players: the look-up form and the newest players, a page at a time. */
async function playersPage(p: ConsolePage) {
  const offset = offsetOf(p);
  const a = await p.api(
    { method: 'get', path: '/api/v1/admin/players', success: 200, shape: AdminPlayerListDocument },
    { query: `page[limit]=${PAGE}&page[offset]=${offset}` },
  );
  if (!a.ok) return p.failed('Players', '/console/players', a);
  return p.view(
    'Players',
    '/console/players',
    html`${playerSearchBody('')}
      <h2>Newest players</h2>
      ${playerList(a.doc, offset, '/console/players', 'players')}`,
  );
}

/** POST /console/players/search: an id goes to the player's page; anything else is kept in the session as the search. */
async function search(p: ConsolePage) {
  const q = String(formOf(p.request).q ?? '').trim();
  if (!q) return p.view('Players', '/console/players', playerSearchBody('', 'Type a player id or the start of an email.'));
  if (UUID_PATH.test(q)) return p.reply.redirect(`/console/players/${q.toLowerCase()}`, 303);
  if (q.length > 320) return p.view('Players', '/console/players', playerSearchBody('', 'An email is at most 320 characters.'));
  p.request.session.set('playerSearch', q);
  return p.reply.redirect('/console/players/search', 303);
}

/** GET /console/players/search: the players of the session's search, a page at a time. */
async function searchResults(p: ConsolePage) {
  const q = p.request.session.get('playerSearch');
  if (!q) return p.reply.redirect('/console/players', 303);
  const offset = offsetOf(p);
  const a = await p.api(
    { method: 'post', path: '/api/v1/admin/players/search', success: 200, shape: AdminPlayerListDocument },
    { query: `page[limit]=${PAGE}&page[offset]=${offset}`, json: { data: { type: 'player_search', attributes: { email_prefix: q } } } },
  );
  if (!a.ok) return p.failed('Players', '/console/players', a);
  return p.view(
    'Players found',
    '/console/players',
    html`${playerSearchForm(q)}
      <p class="muted">Emails starting with <strong data-testid="search-prefix">${q}</strong>, in any case.</p>
      ${playerList(a.doc, offset, '/console/players/search', 'players-found')}`,
  );
}

/** The players pages: the newest, a search and its results, one player, and the actions on a player. */
export function playersRoutes(app: FastifyInstance) {
  app.get('/players', signedIn(playersPage));
  app.post('/players/search', signedIn(search));
  app.get('/players/search', signedIn(searchResults));
  app.get('/players/:id', signedIn(playerPage));
  playerActionRoutes(app);
}

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { chart, notice, stat, table, when } from '../layout.js';
import { paramOf, queryOf, signedIn, type ConsolePage } from '../signed-in.js';
import { balanceCell, debtNotice, storeSection } from './player-store.js';

type Player = Schemas['AdminPlayerDocument']['data'];
type StoreAnswer = Parameters<typeof storeSection>[0];
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

/** The look-up form, with an error or a hint below. */
export function playerSearchBody(q: string, error?: string): SafeHtml {
  return html`<form method="get" action="/console/players" role="search" data-testid="player-search">
      <input type="search" name="q" value="${q}" placeholder="Player id or email" aria-label="Player id or email" required />
      <button type="submit">Look up</button>
    </form>
    ${error ? notice('error', error) : notice('empty', 'Look a player up by id or by email (any case).')}`;
}

/** The player's headline figures. */
const summary = (p: Player) =>
  html`<section class="stats">
      ${stat('Email', p.attributes.email ?? 'guest', 'player-email', 'wide')}
      ${stat('Unopened chests', p.attributes.inventory.total_chests, 'player-chests')}
      ${stat('Openings', p.attributes.openings.total, 'player-openings')}
      ${stat('Joined', when(p.attributes.created_at).slice(0, 10), 'player-joined', 'text')}
    </section>
    <p class="muted">Player <code data-testid="player-id">${p.id}</code>${p.attributes.is_anonymous ? ' · guest' : ''}</p>`;

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

/** One player's page, from GET /api/v1/admin/players/{id} and GET /api/v1/admin/players/{id}/store. */
export const playerBody = (p: Player, names: Names, store: StoreAnswer): SafeHtml =>
  html`<form method="get" action="/console/players" role="search">
      <input type="search" name="q" placeholder="Another player: id or email" aria-label="Player id or email" required />
    </form>
    ${debtNotice(p.attributes.balances)} ${summary(p)} ${holdings(p.attributes)} ${spendLimits(p.attributes)} ${storeSection(store)}
    ${ledgerAndCollections(p.attributes)} ${chestsAndOpenings(p.attributes, names)}`;

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
      { method: 'get', path: '/api/v1/collectibles', success: 200 },
      { query: `page[limit]=100&page[offset]=${offset}&fields[collectible]=name` },
    );
  const [chests, first] = await Promise.all([
    p.api({ method: 'get', path: '/api/v1/chests', success: 200 }, { query: 'page[limit]=100' }),
    collectiblePage(0),
  ]);
  const names: Names = { chests: new Map(), collectibles: new Map() };
  if (chests.ok) for (const c of chests.doc.data) names.chests.set(c.id, c.attributes.name);
  if (!first.ok) return names;
  const pages = Math.min(MAX_COLLECTIBLE_PAGES, Math.ceil(first.doc.meta.total_count / 100));
  const rest = await Promise.all(Array.from({ length: Math.max(0, pages - 1) }, (_, i) => collectiblePage((i + 1) * 100)));
  for (const a of [first, ...rest]) if (a.ok) for (const c of a.doc.data) names.collectibles.set(c.id, c.attributes.name);
  return names;
}

/** GET /console/players/:id: a player by id or email. */
async function playerPage(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  const [a, names] = await Promise.all([p.api({ method: 'get', path: '/api/v1/admin/players/{id}', success: 200 }, { params: { id } }), namesOf(p)]);
  if (!a.ok && a.status === 404) return p.view('Players', '/console/players', playerSearchBody(id, `No player "${id}" in this app.`), 404);
  if (!a.ok) return p.failed('Player', '/console/players', a);
  // By the player's id: the page's own may be an email.
  const store = await p.api({ method: 'get', path: '/api/v1/admin/players/{id}/store', success: 200 }, { params: { id: a.doc.data.id } });
  return p.view(`Player ${a.doc.data.attributes.email ?? a.doc.data.id}`, '/console/players', playerBody(a.doc.data, names, store));
}

/** The players pages: look-up and one player. */
export function playersRoutes(app: FastifyInstance) {
  app.get(
    '/players',
    signedIn(async (p) => {
      const q = queryOf(p.request, 'q').trim();
      if (!q) return p.view('Players', '/console/players', playerSearchBody(''));
      return p.reply.redirect(`/console/players/${encodeURIComponent(q)}`, 303);
    }),
  );
  app.get('/players/:id', signedIn(playerPage));
}

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { chart, notice, stat, table, when } from '../layout.js';
import { paramOf, queryOf, signedIn, type ConsolePage } from '../signed-in.js';

type Player = Schemas['AdminPlayerDocument']['data'];
type Attributes = Player['attributes'];

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
      ${stat('Email', p.attributes.email ?? 'guest', 'player-email')} ${stat('Unopened chests', p.attributes.inventory.total_chests, 'player-chests')}
      ${stat('Openings', p.attributes.openings.total, 'player-openings')}
      ${stat('Joined', when(p.attributes.created_at).slice(0, 10), 'player-joined')}
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
        a.balances.map((b) => [b.code, html`<span data-testid="balance-${b.code}">${b.amount}</span>`]),
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

/** The ledger and the collections, as tables. */
const ledgerAndCollections = (a: Attributes) =>
  html`<h2>Ledger</h2>
    ${
      a.ledger.latest.length
        ? table(
            ['When', 'Currency', 'Change', 'Balance after', 'Reason', 'Reference'],
            a.ledger.latest.map((e) => [when(e.at), e.currency, e.delta, e.balance_after, e.reason, e.reference]),
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

/** The unopened chests and the latest openings. */
const chestsAndOpenings = (a: Attributes) =>
  html`<h2>Unopened chests</h2>
    ${
      a.inventory.chests.length
        ? table(
            ['Chest', 'Source', 'Acquired'],
            a.inventory.chests.map((c) => [c.name, c.source, when(c.acquired_at)]),
            'player-inventory',
          )
        : notice('empty', 'No unopened chests.')
    }
    <h2>Latest openings</h2>
    ${
      a.openings.latest.length
        ? table(
            ['Opened', 'Chest type', 'Rules', 'Items'],
            a.openings.latest.map((o) => [
              when(o.opened_at),
              o.chest_type_id,
              `v${o.rules_version}`,
              o.items.map((i) => `${i.collectible_id} (${i.rarity})`).join(', '),
            ]),
            'player-openings-table',
          )
        : notice('empty', 'This player has not opened a chest yet.')
    }`;

/** One player's page, from GET /api/v1/admin/players/{id}. */
export const playerBody = (p: Player): SafeHtml =>
  html`<form method="get" action="/console/players" role="search">
      <input type="search" name="q" placeholder="Another player: id or email" aria-label="Player id or email" required />
    </form>
    ${summary(p)} ${holdings(p.attributes)} ${ledgerAndCollections(p.attributes)} ${chestsAndOpenings(p.attributes)}`;

/** GET /console/players/:id: a player by id or email. */
async function playerPage(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  const a = await p.api({ method: 'get', path: '/api/v1/admin/players/{id}', success: 200 }, { params: { id } });
  if (!a.ok && a.status === 404) return p.view('Players', '/console/players', playerSearchBody(id, `No player "${id}" in this app.`), 404);
  if (!a.ok) return p.failed('Player', '/console/players', a);
  return p.view(`Player ${a.doc.data.attributes.email ?? a.doc.data.id}`, '/console/players', playerBody(a.doc.data));
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

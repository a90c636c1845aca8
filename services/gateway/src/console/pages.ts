import { WEBHOOK_EVENT_TYPES } from '@ccs/shared';
import { html, type SafeHtml } from './html.js';
import { chart, notice, stat, table } from './layout.js';

/** The console's page bodies, from the admin API's documents (their attributes as the OpenAPI document describes them). */

/* eslint-disable @typescript-eslint/no-explicit-any -- the admin API's documents, read as it documents them */

const when = (iso: string | null | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');
const hourLabel = (iso: string) => iso.slice(11, 16);

export function signInBody(error?: string): SafeHtml {
  return html`${error ? notice('error', error) : ''}
    <article>
      <form method="post" action="/console/sign-in" data-testid="sign-in">
        <label>
          The app's secret key
          <input type="password" name="secret_key" autocomplete="off" required placeholder="sk_…" aria-describedby="key-help" />
          <small id="key-help"
            >Printed once when the app was created (<code>npm run admin -- create-app</code>, or by <code>npm start</code> for the demo app); kept
            only in an encrypted, HttpOnly session cookie, never in the page.</small
          >
        </label>
        <button type="submit">Sign in</button>
      </form>
    </article>`;
}

export function overviewBody(o: any): SafeHtml {
  const a = o.attributes;
  const hourly = a.hourly as { hour: string; openings: number; purchases: number }[];
  const flows = a.currency_flows_24h as { code: string; reason: string; credited: string; debited: string }[];
  const versions = a.content_versions as Record<string, number | null>;
  return html`<section class="stats">
      ${stat('Players', a.players.total, 'players-total')} ${stat('Registered', a.players.registered, 'players-registered')}
      ${stat('Guests', a.players.guests, 'players-guests')} ${stat('Openings (24 h)', a.openings_last_24h, 'openings-24h')}
      ${stat('Purchases', a.purchases.completed, 'purchases-completed')} ${stat('Unopened chests', a.chests.unopened, 'chests-unopened')}
      ${stat('Items granted', a.items_granted, 'items-granted')} ${stat('Collectors', a.collectors, 'collectors')}
    </section>
    <section>
      <h2>Openings and purchases, last 24 hours</h2>
      ${
        hourly.some((h) => h.openings || h.purchases)
          ? ''
          : notice('empty', 'No openings or purchases in the last 24 hours yet: the chart fills as players open and buy chests.')
      }
      ${chart(
        'openings-chart',
        {
          type: 'bar',
          labels: hourly.map((h) => hourLabel(h.hour)),
          datasets: [
            { label: 'Openings', data: hourly.map((h) => h.openings) },
            { label: 'Purchases', data: hourly.map((h) => h.purchases) },
          ],
        },
        'Openings and completed purchases per hour (UTC), oldest first.',
      )}
    </section>
    <section class="grid-2">
      <div>
        <h2>Currency sources and sinks (24 h)</h2>
        ${
          flows.length
            ? table(
                ['Currency', 'Reason', 'Credited', 'Debited'],
                flows.map((f) => [f.code, f.reason, f.credited, f.debited]),
                'flows',
              )
            : notice('empty', 'No currency moved in the last 24 hours.')
        }
      </div>
      <div>
        <h2>Balances</h2>
        ${table(
          ['Currency', 'Total held', 'Holders'],
          (a.balances as any[]).map((b) => [`${b.name} (${b.code})`, b.total, b.holders]),
          'balances',
        )}
        <h2>Content versions applied</h2>
        ${table(
          ['Service', 'Version'],
          Object.entries(versions).map(([s, v]) => [s, v ?? 'none yet']),
          'content-versions',
        )}
      </div>
    </section>`;
}

export function playerSearchBody(q: string, error?: string): SafeHtml {
  return html`<form method="get" action="/console/players" role="search" data-testid="player-search">
      <input type="search" name="q" value="${q}" placeholder="Player id or email" aria-label="Player id or email" required />
      <button type="submit">Look up</button>
    </form>
    ${error ? notice('error', error) : notice('empty', 'Look a player up by id or by email (any case).')}`;
}

export function playerBody(p: any): SafeHtml {
  const a = p.attributes;
  const collections = a.collections as { id: string; name: string; unique_items: number; total_items: number; completed_at: string | null }[];
  const openings = a.openings.latest as {
    id: string;
    chest_type_id: string;
    opened_at: string;
    rules_version: number;
    items: { collectible_id: string; rarity: string }[];
  }[];
  return html`<form method="get" action="/console/players" role="search">
      <input type="search" name="q" placeholder="Another player: id or email" aria-label="Player id or email" required />
    </form>
    <section class="stats">
      ${stat('Email', a.email ?? 'guest', 'player-email')} ${stat('Unopened chests', a.inventory.total_chests, 'player-chests')}
      ${stat('Openings', a.openings.total, 'player-openings')} ${stat('Joined', when(a.created_at).slice(0, 10), 'player-joined')}
    </section>
    <p class="muted">Player <code data-testid="player-id">${p.id}</code>${a.is_anonymous ? ' · guest' : ''}</p>
    <section class="grid-2">
      <div>
        <h2>Balances</h2>
        ${table(
          ['Currency', 'Amount'],
          (a.balances as { code: string; amount: string }[]).map((b) => [b.code, html`<span data-testid="balance-${b.code}">${b.amount}</span>`]),
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
    </section>
    <h2>Ledger</h2>
    ${
      (a.ledger.latest as any[]).length
        ? table(
            ['When', 'Currency', 'Change', 'Balance after', 'Reason', 'Reference'],
            (a.ledger.latest as any[]).map((e) => [when(e.at), e.currency, e.delta, e.balance_after, e.reason, e.reference]),
            'player-ledger',
          )
        : notice('empty', 'No currency movements yet.')
    }
    <h2>Collections</h2>
    ${table(
      ['Collection', 'Owned', 'Completed'],
      collections.map((c) => [c.name, html`<span data-testid="owned-${c.id}">${c.unique_items}</span> / ${c.total_items}`, when(c.completed_at)]),
      'player-collections',
    )}
    <h2>Unopened chests</h2>
    ${
      a.inventory.chests.length
        ? table(
            ['Chest', 'Source', 'Acquired'],
            (a.inventory.chests as any[]).map((c) => [c.name, c.source, when(c.acquired_at)]),
            'player-inventory',
          )
        : notice('empty', 'No unopened chests.')
    }
    <h2>Latest openings</h2>
    ${
      openings.length
        ? table(
            ['Opened', 'Chest type', 'Rules', 'Items'],
            openings.map((o) => [
              when(o.opened_at),
              o.chest_type_id,
              `v${o.rules_version}`,
              o.items.map((i) => `${i.collectible_id} (${i.rarity})`).join(', '),
            ]),
            'player-openings-table',
          )
        : notice('empty', 'This player has not opened a chest yet.')
    }`;
}

export function chestsBody(chests: any[]): SafeHtml {
  if (chests.length === 0) return notice('empty', 'The app has no chest types in its catalog: load content with chests (Content).');
  return table(
    ['Chest', 'Description', 'Price', ''],
    chests.map((c) => [
      c.attributes.name,
      c.attributes.description,
      Object.entries(c.meta?.price ?? {})
        .map(([k, v]) => `${String(v)} ${k}`)
        .join(', ') || '—',
      html`<a href="/console/chests/${c.id}">Odds and simulation</a>`,
    ]),
    'chests',
  );
}

/** The chest's real openings: observed drops per rarity against the disclosed shares. */
export function dropsBody(d: any): SafeHtml {
  const a = d.attributes;
  const rarities = a.rarities as { rarity: string; disclosed: number; observed: number; count: number }[];
  const pct = (x: number) => Math.round(x * 10_000) / 100;
  if (a.openings === 0)
    return notice('empty', 'No player has opened this chest yet (in the openings kept): observed drops appear here once they do.');
  return html`<p>
      <strong data-testid="drops-openings">${a.openings}</strong> openings since ${when(a.since)},
      <strong data-testid="drops-items">${a.items}</strong> items · chi-square p-value
      ${a.chi_square_p_value === null ? '—' : a.chi_square_p_value.toFixed(4)}
    </p>
    ${chart(
      'drops-chart',
      {
        type: 'bar',
        labels: rarities.map((r) => r.rarity),
        datasets: [
          { label: 'Disclosed %', data: rarities.map((r) => pct(r.disclosed)) },
          { label: 'Observed % (real openings)', data: rarities.map((r) => pct(r.observed)) },
        ],
      },
      "Disclosed share of each rarity against the share among the items players' real openings drew.",
    )}
    ${table(
      ['Rarity', 'Disclosed', 'Observed', 'Items'],
      rarities.map((r) => [r.rarity, `${pct(r.disclosed)} %`, `${pct(r.observed)} %`, html`<span data-testid="drops-${r.rarity}">${r.count}</span>`]),
      'drops',
    )}`;
}

export function chestBody(chestId: string, drops: any): SafeHtml {
  return html`<h2>Observed drops</h2>
    ${dropsBody(drops)}
    <h2>Simulation</h2>
    <p class="muted">
      The disclosed long-run share of each rarity, against what the production roll and pity code draw when the chest is opened many times.
    </p>
    <form
      hx-post="/console/chests/${chestId}/simulation"
      hx-target="#simulation"
      hx-indicator="#sim-loading"
      data-testid="simulation-form"
      class="grid-2"
    >
      <label>Openings <input type="number" name="opens" min="1" max="100000" value="10000" /></label>
      <label>Seed (hex, optional: reproducible) <input type="text" name="seed" pattern="([0-9a-f]{2}){1,64}" /></label>
      <button type="submit">Run simulation <span id="sim-loading" class="htmx-indicator" aria-busy="true"></span></button>
    </form>
    <div id="simulation" hx-post="/console/chests/${chestId}/simulation" hx-trigger="load" hx-indicator="#sim-loading">
      <p aria-busy="true">Running 10,000 openings…</p>
    </div>`;
}

export function simulationBody(s: any): SafeHtml {
  const a = s.attributes;
  const rarities = a.rarities as { rarity: string; disclosed: number; observed: number; count: number; deviation: number }[];
  const pct = (x: number) => Math.round(x * 10_000) / 100;
  return html`<h3 data-testid="simulated-chest">
      ${a.chest.name} · ${a.opens.toLocaleString('en')} simulated openings · rules v${a.chest.rules_version}
    </h3>
    ${chart(
      'odds-chart',
      {
        type: 'bar',
        labels: rarities.map((r) => r.rarity),
        datasets: [
          { label: 'Disclosed %', data: rarities.map((r) => pct(r.disclosed)) },
          { label: 'Observed %', data: rarities.map((r) => pct(r.observed)) },
        ],
      },
      'Disclosed share of each rarity against the observed share in the simulated openings.',
    )}
    ${table(
      ['Rarity', 'Disclosed', 'Observed', 'Items', 'Deviation'],
      rarities.map((r) => [r.rarity, `${pct(r.disclosed)} %`, `${pct(r.observed)} %`, r.count, r.deviation.toFixed(4)]),
      'simulation',
    )}
    <p>
      Chi-square p-value: rarities <strong data-testid="p-rarities">${a.chi_square_p_value.rarities.toFixed(4)}</strong>, collectibles
      ${a.chi_square_p_value.collectibles.toFixed(4)}${a.seed ? html` · seed <code>${a.seed}</code>` : ''}${
        a.pity ? html` · pity on ${a.pity.rarity}: ${a.pity.guaranteed} guaranteed of ${a.pity.hits} hits` : ''
      }
    </p>`;
}

export function contentBody(versions: any, result?: SafeHtml, draft = ''): SafeHtml {
  const list = versions.data as {
    id: string;
    attributes: { version: number; loaded_at: string; current: boolean; counts: Record<string, number> };
  }[];
  return html`${result ?? ''}
    <h2>Versions</h2>
    ${
      list.length
        ? table(
            ['Version', 'Loaded', 'Collections', 'Collectibles', 'Chests', ''],
            list.map((v) => [
              html`<span data-testid="version-${v.attributes.version}">v${v.attributes.version}</span
                >${v.attributes.current ? html` <mark>current</mark>` : ''}`,
              when(v.attributes.loaded_at),
              v.attributes.counts.collections ?? '—',
              v.attributes.counts.collectibles ?? '—',
              v.attributes.counts.chests ?? '—',
              v.attributes.current ? '' : html`<a href="/console/content/${v.attributes.version}/diff">Diff with current</a>`,
            ]),
            'versions',
          )
        : notice('empty', 'No stored versions yet.')
    }
    <h2>Load a content file</h2>
    <form method="post" action="/console/content" data-testid="content-form">
      <label>From a file <input type="file" accept="application/json,.json" data-fills="content-text" /></label>
      <label
        >Or paste it
        <textarea id="content-text" name="content" class="content-file" required placeholder='{"currencies": [...], "rarities": [...], ...}'>
${draft}</textarea>
      </label>
      <small>It is validated first (docs/content.md); a file that does not validate changes nothing and each problem is listed.</small>
      <button type="submit">Validate and load as the next version</button>
    </form>`;
}

export function diffBody(d: any): SafeHtml {
  const a = d.attributes;
  const sections = a.sections as { section: string; added: string[]; removed: string[]; changed: string[] }[];
  const rows = sections.map((s) => [s.section, s.added.join(', ') || '—', s.removed.join(', ') || '—', s.changed.join(', ') || '—']);
  return html`<p>From version ${a.from_version} to the current version ${a.to_version}.</p>
    ${rows.length === 0 ? notice('empty', 'No differences.') : table(['Section', 'Added', 'Removed', 'Changed'], rows, 'diff')}
    <p><a href="/console/content">Back to content</a></p>`;
}

export function auditBody(doc: any, offset: number, limit: number): SafeHtml {
  const entries = doc.data as { id: string; attributes: { at: string; actor: string; action: string; target: string | null; status: number } }[];
  const total = doc.meta.total_count as number;
  return html`${
      entries.length
        ? table(
            ['When', 'Who', 'What', 'Target', 'Status'],
            entries.map((e) => [when(e.attributes.at), e.attributes.actor, e.attributes.action, e.attributes.target, e.attributes.status]),
            'audit',
          )
        : notice('empty', 'No admin calls recorded yet.')
    }
    <nav aria-label="pages">
      <ul>
        ${offset > 0 ? html`<li><a href="/console/audit?offset=${Math.max(0, offset - limit)}">Newer</a></li>` : ''}
        ${offset + limit < total ? html`<li><a href="/console/audit?offset=${offset + limit}">Older</a></li>` : ''}
        <li class="muted">${total} entries</li>
      </ul>
    </nav>`;
}

export function webhooksBody(doc: any, created?: { url: string; secret: string }, error?: string): SafeHtml {
  const endpoints = doc.data as any[];
  return html`${
      created
        ? notice(
            'success',
            html`Endpoint for <code>${created.url}</code> added. Its signing secret, shown only now:
              <p class="secret" data-testid="new-secret">${created.secret}</p>
              Verify each request with it (docs/webhooks.md).`,
          )
        : ''
    }
    ${error ? notice('error', error) : ''}
    ${
      endpoints.length
        ? table(
            ['URL', 'Events', 'Enabled', 'Pending', 'Delivered', 'Parked', ''],
            endpoints.map((e) => [
              e.attributes.url,
              e.attributes.events.length ? e.attributes.events.join(', ') : 'all',
              e.attributes.enabled ? 'yes' : 'no',
              e.attributes.deliveries.pending,
              e.attributes.deliveries.delivered,
              html`<span data-testid="parked-${e.id}">${e.attributes.deliveries.parked}</span>`,
              html`<a href="/console/webhooks/${e.id}">Deliveries</a>`,
            ]),
            'webhooks',
          )
        : notice('empty', 'No webhook endpoints yet: add one below to receive events on your own backend.')
    }
    <h2>Add an endpoint</h2>
    <form method="post" action="/console/webhooks" data-testid="webhook-form">
      <label>URL <input type="url" name="url" required placeholder="https://game.example.com/hooks/ccs" /></label>
      <label>Description <input type="text" name="description" maxlength="500" /></label>
      <fieldset>
        <legend>Events (none checked: all)</legend>
        ${WEBHOOK_EVENT_TYPES.map((t) => html`<label><input type="checkbox" name="events" value="${t}" /> ${t}</label>`)}
      </fieldset>
      <button type="submit">Add endpoint</button>
    </form>`;
}

export function deliveryRow(endpointId: string, d: any): (SafeHtml | string | number | null)[] {
  const a = d.attributes;
  return [
    when(a.created_at),
    a.event_type,
    html`<span data-testid="status-${d.id}">${a.status}</span>`,
    a.attempts,
    a.last_status_code,
    a.last_error,
    a.status === 'pending'
      ? when(a.next_attempt_at)
      : html`<form class="inline" hx-post="/console/webhooks/${endpointId}/deliveries/${d.id}/retry" hx-target="closest tr" hx-swap="outerHTML">
          <button type="submit" data-testid="retry-${d.id}">${a.status === 'parked' ? 'Retry' : 'Send again'}</button>
        </form>`,
  ];
}

export function deliveryRowHtml(endpointId: string, d: any): SafeHtml {
  return html`<tr>
    ${deliveryRow(endpointId, d).map((c) => html`<td>${c ?? '—'}</td>`)}
  </tr>`;
}

export function webhookBody(endpoint: any, deliveries: any, status: string | undefined, secret?: string): SafeHtml {
  const a = endpoint.attributes;
  const filters = ['all', 'pending', 'delivered', 'parked'];
  return html`${
      secret
        ? notice(
            'success',
            html`New signing secret, shown only now:
              <p class="secret" data-testid="new-secret">${secret}</p>`,
          )
        : ''
    }
    <p>
      <code>${a.url}</code> · ${a.events.length ? a.events.join(', ') : 'all events'} · ${a.enabled ? 'enabled' : 'disabled'} · secret
      ${a.secret_hint}
    </p>
    <div class="grid-2">
      <form method="post" action="/console/webhooks/${endpoint.id}/toggle" class="inline">
        <button type="submit" class="secondary">${a.enabled ? 'Disable' : 'Enable'}</button>
      </form>
      <form method="post" action="/console/webhooks/${endpoint.id}/rotate" class="inline">
        <button type="submit" class="secondary">Rotate secret</button>
      </form>
      <form method="post" action="/console/webhooks/${endpoint.id}/delete" class="inline">
        <button type="submit" class="contrast">Remove endpoint</button>
      </form>
    </div>
    <nav aria-label="delivery status">
      <ul>
        ${filters.map(
          (f) =>
            html`<li>
              <a
                href="/console/webhooks/${endpoint.id}${f === 'all' ? '' : `?status=${f}`}"
                ${(status ?? 'all') === f ? html`aria-current="page"` : ''}
                >${f}${f === 'all' ? '' : ` (${a.deliveries[f]})`}</a
              >
            </li>`,
        )}
      </ul>
    </nav>
    ${
      deliveries.data.length
        ? table(
            ['Created', 'Event', 'Status', 'Attempts', 'HTTP', 'Last error', 'Next / action'],
            deliveries.data.map((d: any) => deliveryRow(endpoint.id, d)),
            'deliveries',
          )
        : notice('empty', status ? `No ${status} deliveries.` : 'No deliveries yet: events of the app after the endpoint was added appear here.')
    }`;
}

export function errorBody(lines: string[]): SafeHtml {
  return notice(
    'error',
    html`<ul>
      ${lines.map((l) => html`<li>${l}</li>`)}
    </ul>`,
  );
}

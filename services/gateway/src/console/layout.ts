import { html, type SafeHtml } from './html.js';

/** The console's pages, in the navigation's order. */
export const NAV = [
  { href: '/console', label: 'Overview' },
  { href: '/console/players', label: 'Players' },
  { href: '/console/chests', label: 'Chests' },
  { href: '/console/banners', label: 'Banners' },
  { href: '/console/store', label: 'Store' },
  { href: '/console/content', label: 'Content' },
  { href: '/console/webhooks', label: 'Webhooks' },
  { href: '/console/audit', label: 'Audit log' },
] as const;

/** The navigation's links and the sign-out button, as list items (the wide bar and the phone menu show the same). */
const navItems = (current: string | undefined) =>
  html`${NAV.map((n) => html`<li><a href="${n.href}" ${n.href === current ? html`aria-current="page"` : ''}>${n.label}</a></li>`)}
    <li>
      <form method="post" action="/console/sign-out" class="inline">
        <button type="submit" class="secondary outline">Sign out</button>
      </form>
    </li>`;

/**
 * htmx's settings: no indicator styles and no settling of `style`, `width` or `height` (both
 * would set inline styles, which the CSP refuses; settling a chart's canvas copied the old
 * canvas's size onto the new one and then removed it, which blanked the new chart).
 */
const HTMX_CONFIG = JSON.stringify({ includeIndicatorStyles: false, allowScriptTags: false, allowEval: false, attributesToSettle: ['class'] });

/**
 * A whole page: Pico's responsive styles, htmx, Chart.js and our script, all served by the gateway
 * (no CDN). The header is one row: the navigation bar on a wide screen, a Menu dropdown on a phone.
 */
export function page(o: { title: string; current?: string; app?: { name: string; id: string }; body: SafeHtml }): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content="${HTMX_CONFIG}" />
        <title>${o.title} · Chest Studio Console</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/console/assets/pico.min.css" />
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/htmx.min.js" defer></script>
        <script src="/console/assets/chart.umd.min.js" defer></script>
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <header class="container console-header">
          <nav>
            <ul class="brand">
              <li><strong>Chest Studio</strong>${o.app ? html` <small class="muted" data-testid="app-name">${o.app.name}</small>` : ''}</li>
            </ul>
            ${
              o.app
                ? html`<ul class="console-nav nav-wide">
                      ${navItems(o.current)}
                    </ul>
                    <ul class="nav-phone">
                      <li>
                        <details class="dropdown">
                          <summary>Menu</summary>
                          <ul dir="rtl">
                            ${navItems(o.current)}
                          </ul>
                        </details>
                      </li>
                    </ul>`
                : ''
            }
          </nav>
        </header>
        <main class="container">
          <h1 title="${o.title}">${o.title}</h1>
          ${o.body}
        </main>
      </body>
    </html>`;
}

/** A message box: `error` for failures, `empty` for "nothing here yet", `warning` before what cannot be undone, `info` otherwise. */
export const notice = (kind: 'error' | 'empty' | 'info' | 'success' | 'warning', body: SafeHtml | string) =>
  html`<article class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}" data-testid="notice-${kind}">${body}</article>`;

/**
 * A column of a table: its heading; `key` for the columns a phone shows first (counts, attempts,
 * actions); `wrap` for long unbroken values (ids, URLs, references), broken anywhere to fit.
 */
export interface Column {
  label: string;
  key?: boolean;
  wrap?: boolean;
}

type Cell = SafeHtml | string | number | null;

/**
 * A table. Under 600 px each row becomes a card (styles in assets.ts): one line per cell with its
 * column's label, the key columns first, so nothing scrolls sideways out of sight.
 */
export function table(columns: (string | Column)[], rows: Cell[][], testid?: string): SafeHtml {
  const cols = columns.map((c) => (typeof c === 'string' ? { label: c } : c));
  return html`<div class="table-box">
    <table class="striped cards" ${testid ? html`data-testid="${testid}"` : ''}>
      <thead>
        <tr>
          ${cols.map((c) => html`<th scope="col" ${c.key ? html`class="key"` : ''}>${c.label}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            html`<tr>
              ${r.map((cell, i) => {
                const c = cols[i];
                const cls = [c?.key ? 'key' : '', c?.wrap ? 'wrap' : ''].filter(Boolean).join(' ');
                return html`<td ${c?.label ? html`data-label="${c.label}"` : ''} ${cls ? html`class="${cls}"` : ''}>
                  <div class="cell">${cell ?? '—'}</div>
                </td>`;
              })}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/**
 * A figure the page shows big: a label and a number. `text`: a word (a date) on one line, cut with
 * an ellipsis if it must be; `wide`: the same, two columns wide (an email; a row of its own on a phone).
 */
export const stat = (label: string, value: string | number, testid: string, kind: 'number' | 'text' | 'wide' = 'number') =>
  html`<article class="stat${kind === 'number' ? '' : ' stat-text'}${kind === 'wide' ? ' stat-wide' : ''}">
    <small>${label}</small>
    <p data-testid="${testid}" ${kind === 'number' ? '' : html`title="${value}"`}>${value}</p>
  </article>`;

/**
 * A chart drawn by console.js with Chart.js from its data (labels and datasets), with a caption for
 * screen readers. `phoneHorizontal`: on a phone its bars run sideways in a taller box (many labels).
 */
export function chart(
  id: string,
  config: {
    type: 'line' | 'bar';
    labels: string[];
    datasets: { label: string; data: number[] }[];
    horizontal?: boolean;
    percent?: boolean;
    phoneHorizontal?: boolean;
  },
  caption: string,
) {
  return html`<figure>
    <div class="chart-box${config.phoneHorizontal ? ' phone-tall' : ''}">
      <canvas id="${id}" data-chart="${JSON.stringify(config)}" role="img" aria-label="${caption}"></canvas>
    </div>
    <figcaption>${caption}</figcaption>
  </figure>`;
}

/** A failure's lines as an error notice. */
export function errorBody(lines: string[]): SafeHtml {
  return notice(
    'error',
    html`<ul>
      ${lines.map((l) => html`<li>${l}</li>`)}
    </ul>`,
  );
}

/** An ISO 8601 time as `YYYY-MM-DD HH:MM:SS` (UTC), or a dash. */
export const when = (iso: string | null | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');

/** A share (0-1) in percent with two decimals. */
export const pct = (x: number) => Math.round(x * 10_000) / 100;

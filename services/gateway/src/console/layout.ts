import { html, type SafeHtml } from './html.js';

/** The console's pages, in the navigation's order. */
export const NAV = [
  { href: '/console', label: 'Overview' },
  { href: '/console/players', label: 'Players' },
  { href: '/console/chests', label: 'Chests' },
  { href: '/console/content', label: 'Content' },
  { href: '/console/webhooks', label: 'Webhooks' },
  { href: '/console/audit', label: 'Audit log' },
] as const;

/** A whole page: Pico's responsive styles, htmx, Chart.js and our script, all served by the gateway (no CDN). */
export function page(o: { title: string; current?: string; app?: { name: string; id: string }; body: SafeHtml }): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowScriptTags":false}' />
        <title>${o.title} · Chest Studio Console</title>
        <link rel="stylesheet" href="/console/assets/pico.min.css" />
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/htmx.min.js" defer></script>
        <script src="/console/assets/chart.umd.min.js" defer></script>
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <header class="container">
          <nav>
            <ul>
              <li><strong>Chest Studio</strong>${o.app ? html` <small class="muted" data-testid="app-name">${o.app.name}</small>` : ''}</li>
            </ul>
            ${
              o.app
                ? html`<ul class="console-nav">
                    ${NAV.map((n) => html`<li><a href="${n.href}" ${n.href === o.current ? html`aria-current="page"` : ''}>${n.label}</a></li>`)}
                    <li>
                      <form method="post" action="/console/sign-out" class="inline">
                        <button type="submit" class="secondary outline">Sign out</button>
                      </form>
                    </li>
                  </ul>`
                : ''
            }
          </nav>
        </header>
        <main class="container">
          <h1>${o.title}</h1>
          ${o.body}
        </main>
      </body>
    </html>`;
}

/** A message box: `error` for failures, `empty` for "nothing here yet", `info` otherwise. */
export const notice = (kind: 'error' | 'empty' | 'info' | 'success', body: SafeHtml | string) =>
  html`<article class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}" data-testid="notice-${kind}">${body}</article>`;

/** A table that scrolls sideways on a narrow screen. */
export function table(headers: string[], rows: (SafeHtml | string | number | null)[][], testid?: string): SafeHtml {
  return html`<div class="overflow-auto">
    <table class="striped" ${testid ? html`data-testid="${testid}"` : ''}>
      <thead>
        <tr>
          ${headers.map((h) => html`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            html`<tr>
              ${r.map((c) => html`<td>${c ?? '—'}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** A figure the page shows big: a label and a number. */
export const stat = (label: string, value: string | number, testid: string) =>
  html`<article class="stat">
    <small>${label}</small>
    <p data-testid="${testid}">${value}</p>
  </article>`;

/** A chart drawn by console.js with Chart.js from its data (labels and datasets), with a caption for screen readers. */
export function chart(
  id: string,
  config: { type: 'line' | 'bar'; labels: string[]; datasets: { label: string; data: number[] }[]; horizontal?: boolean; percent?: boolean },
  caption: string,
) {
  return html`<figure>
    <div class="chart-box"><canvas id="${id}" data-chart="${JSON.stringify(config)}" role="img" aria-label="${caption}"></canvas></div>
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

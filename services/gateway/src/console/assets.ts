/** The console's own script and styles (served at /console/assets/console.{js,css}); no inline script: the CSP forbids it. */

export const CONSOLE_JS = `'use strict';
var PHONE = '(max-width: 600px)';
// Charts: every <canvas data-chart> is drawn with Chart.js from its JSON (labels, datasets), once.
// On a phone a chart that asks for it (phoneHorizontal: the 24-hour chart) lays its bars sideways,
// one row per label, in a taller box (console.css), instead of 48 bars squeezed into 350 px.
function drawCharts(root) {
  if (!window.Chart) return;
  root.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
    if (window.Chart.getChart(canvas)) return;
    var c = JSON.parse(canvas.dataset.chart);
    var horizontal = c.horizontal || (c.phoneHorizontal && window.matchMedia(PHONE).matches);
    var palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];
    new window.Chart(canvas, {
      type: c.type,
      data: {
        labels: c.labels,
        datasets: c.datasets.map(function (d, i) {
          return { label: d.label, data: d.data, backgroundColor: palette[i % palette.length], borderColor: palette[i % palette.length], tension: 0.25 };
        }),
      },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        // Completion shares run 0-100 %; other axes start at zero with whole-number ticks (counts, and rarity shares in points).
        scales: c.percent
          ? { [horizontal ? 'x' : 'y']: { min: 0, max: 100, ticks: { callback: function (v) { return v + '%'; } } } }
          : { [horizontal ? 'x' : 'y']: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    });
    canvas.dataset.drawn = '1';
  });
}
document.addEventListener('DOMContentLoaded', function () {
  drawCharts(document);
  // A content file picked from disk fills the textarea it belongs to.
  document.querySelectorAll('input[type=file][data-fills]').forEach(function (input) {
    input.addEventListener('change', function () {
      var file = input.files && input.files[0];
      if (!file) return;
      file.text().then(function (text) { document.getElementById(input.dataset.fills).value = text; });
    });
  });
});
// Content htmx replaces (a new simulation): its charts are destroyed first (their resize observers
// with them), and the new content's charts are drawn once htmx has settled it, at its final size.
document.addEventListener('htmx:beforeSwap', function (e) {
  if (!window.Chart || !e.detail.target) return;
  e.detail.target.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
    var chart = window.Chart.getChart(canvas);
    if (chart) chart.destroy();
  });
});
document.addEventListener('htmx:afterSettle', function (e) { drawCharts(e.target); });
`;

export const CONSOLE_CSS = `
.muted { color: var(--pico-muted-color); }
.inline { display: inline; margin: 0; }
.inline button { margin: 0; padding: 0.25rem 0.75rem; }

/* Headings: the page title above section headings above sub-headings, at every width. */
main > h1 { --pico-font-size: 2rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
main h2 { --pico-font-size: 1.35rem; }
main h3 { --pico-font-size: 1.1rem; }

/* The header: one row. The navigation bar on a wide screen, a Menu dropdown on a phone. */
.console-header nav { flex-wrap: nowrap; gap: 0.5rem; }
.console-header .brand { min-width: 0; }
.console-header .brand li { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.console-nav { flex-wrap: wrap; justify-content: flex-end; }
.nav-phone { display: none; }

.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: 1rem; }
.stat { margin: 0; padding: 1rem; min-width: 0; }
.stat p { font-size: 1.75rem; font-weight: 700; margin: 0; }
.stat-wide { grid-column: span 2; }
.stat-text p { font-size: 1.25rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.chart-box { position: relative; height: 18rem; }
.notice-error { border-left: 0.3rem solid #d62728; }
.notice-empty { border-left: 0.3rem solid var(--pico-muted-border-color); color: var(--pico-muted-color); }
.notice-success { border-left: 0.3rem solid #2ca02c; }
.notice-warning { border-left: 0.3rem solid #ff7f0e; }
.secret { font-family: monospace; word-break: break-all; }
/* A balance below zero (a debt): red, with a mark; the page says what it blocks. */
.debt { color: #d62728; font-weight: 700; }
mark.debt-mark { background: #d62728; color: #fff; padding: 0 0.35rem; border-radius: 0.25rem; font-size: 0.8em; }
main p code { overflow-wrap: anywhere; }
.htmx-indicator { display: none; }
.htmx-request .htmx-indicator, .htmx-request.htmx-indicator { display: inline-block; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1.5rem; }
.grid-2 > * { min-width: 0; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: center; margin-bottom: var(--pico-spacing); }
.actions form { margin: 0; }
textarea.content-file { min-height: 14rem; font-family: monospace; font-size: 0.8rem; }
/* The player's actions: each folded under its title, its form (and the note it asks for) below. */
.player-actions details { border-bottom: 1px solid var(--pico-muted-border-color); padding-bottom: 0.5rem; margin-bottom: 0.5rem; }
.player-actions details form { margin-top: 0.75rem; }
.player-actions textarea { resize: vertical; }

/* Tables fit their column: long ids, URLs and references wrap anywhere instead of pushing it wider. */
.table-box { max-width: 100%; }
table.cards td { overflow-wrap: break-word; }
table.cards td.wrap { overflow-wrap: anywhere; }

@media (max-width: 600px) {
  main > h1 { --pico-font-size: 1.6rem; }
  main h2 { --pico-font-size: 1.2rem; }
  main h3 { --pico-font-size: 1.05rem; }
  .nav-wide { display: none; }
  .nav-phone { display: flex; }
  .stat { padding: 0.75rem; }
  .stat p { font-size: 1.3rem; }
  .stat-wide { grid-column: 1 / -1; }
  .stat-text p { font-size: 1.1rem; }
  .chart-box.phone-tall { height: 34rem; }
  /* Tables become cards: one per row, a line per cell with its column's label, key columns first. */
  table.cards thead { display: none; }
  table.cards, table.cards tbody { display: block; }
  table.cards tr { display: flex; flex-direction: column; margin-bottom: 0.75rem; border: 1px solid var(--pico-muted-border-color); border-radius: var(--pico-border-radius); }
  table.cards td { display: flex; gap: 0.75rem; padding: 0.35rem 0.75rem; border: 0; }
  table.cards td::before { content: attr(data-label); flex: 0 0 7.5rem; color: var(--pico-muted-color); font-size: 0.85em; }
  table.cards td:not([data-label])::before { content: none; }
  table.cards td > .cell { flex: 1 1 auto; min-width: 0; }
  table.cards td.key { order: -1; font-weight: 600; }
}
`;

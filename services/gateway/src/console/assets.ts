/** The console's own script and styles (served at /console/assets/console.{js,css}); no inline script: the CSP forbids it. */

export const CONSOLE_JS = `'use strict';
// Charts: every <canvas data-chart> is drawn with Chart.js from its JSON (labels, datasets).
function drawCharts(root) {
  if (!window.Chart) return;
  root.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
    if (canvas.dataset.drawn) return;
    canvas.dataset.drawn = '1';
    var c = JSON.parse(canvas.dataset.chart);
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
        indexAxis: c.horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        // Completion shares run 0-100 %; other axes start at zero with whole-number ticks (counts, and rarity shares in points).
        scales: c.percent
          ? { [c.horizontal ? 'x' : 'y']: { min: 0, max: 100, ticks: { callback: function (v) { return v + '%'; } } } }
          : { [c.horizontal ? 'x' : 'y']: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    });
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
document.addEventListener('htmx:afterSwap', function (e) { drawCharts(e.target); });
`;

export const CONSOLE_CSS = `
.muted { color: var(--pico-muted-color); }
.inline { display: inline; margin: 0; }
.inline button { margin: 0; padding: 0.25rem 0.75rem; }
.console-nav { flex-wrap: wrap; }
.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: 1rem; }
.stat { margin: 0; padding: 1rem; }
.stat p { font-size: 1.75rem; font-weight: 700; margin: 0; }
.chart-box { position: relative; height: 18rem; }
.notice-error { border-left: 0.3rem solid #d62728; }
.notice-empty { border-left: 0.3rem solid var(--pico-muted-border-color); color: var(--pico-muted-color); }
.notice-success { border-left: 0.3rem solid #2ca02c; }
.secret { font-family: monospace; word-break: break-all; }
.htmx-indicator { display: none; }
.htmx-request .htmx-indicator, .htmx-request.htmx-indicator { display: inline-block; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1.5rem; }
textarea.content-file { min-height: 14rem; font-family: monospace; font-size: 0.8rem; }
@media (max-width: 576px) { h1 { font-size: 1.5rem; } .stat p { font-size: 1.3rem; } }
`;

import type { FastifyInstance } from 'fastify';
import { ChestDocument } from '../../resources/chests.js';
import { ChestDropsDocument, SimulationDocument } from '../../resources/studio-chest-odds.js';
import { errorLines } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { chart, errorBody, notice, pct, table, when } from '../layout.js';
import { formOf, paramOf, sendHtml, signedIn, type ConsolePage } from '../signed-in.js';

type Drops = ChestDropsDocument['data']['attributes'];
type Simulation = SimulationDocument['data']['attributes'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Disclosed against observed share per rarity, as a bar chart. */
const oddsChart = (id: string, rarities: { rarity: string; disclosed: number; observed: number }[], observed: string, caption: string) =>
  chart(
    id,
    {
      type: 'bar',
      labels: rarities.map((r) => r.rarity),
      datasets: [
        { label: 'Disclosed %', data: rarities.map((r) => pct(r.disclosed)) },
        { label: observed, data: rarities.map((r) => pct(r.observed)) },
      ],
    },
    caption,
  );

/** The chest's real openings: observed drops per rarity against the disclosed shares. */
export function dropsBody(a: Drops): SafeHtml {
  if (a.openings === 0)
    return notice('empty', 'No player has opened this chest yet (in the openings kept): observed drops appear here once they do.');
  return html`<p>
      <strong data-testid="drops-openings">${a.openings}</strong> openings since ${when(a.since)},
      <strong data-testid="drops-items">${a.items}</strong> items · chi-square p-value
      ${a.chi_square_p_value === null ? '—' : a.chi_square_p_value.toFixed(4)}
    </p>
    ${oddsChart(
      'drops-chart',
      a.rarities,
      'Observed % (real openings)',
      "Disclosed share of each rarity against the share among the items players' real openings drew.",
    )}
    ${table(
      ['Rarity', 'Disclosed', 'Observed', 'Items'],
      a.rarities.map((r) => [
        r.rarity,
        `${pct(r.disclosed)} %`,
        `${pct(r.observed)} %`,
        html`<span data-testid="drops-${r.rarity}">${r.count}</span>`,
      ]),
      'drops',
    )}`;
}

/** The chest's page: its observed drops, and a simulation run in place (htmx) when the page loads and on demand. */
export function chestBody(chestId: string, drops: Drops): SafeHtml {
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

/** A simulation run, as the fragment htmx swaps in. */
export function simulationBody(a: Simulation): SafeHtml {
  return html`<h3 data-testid="simulated-chest">
      ${a.chest.name} · ${a.opens.toLocaleString('en')} simulated openings · rules v${a.chest.rules_version}
    </h3>
    ${oddsChart('odds-chart', a.rarities, 'Observed %', 'Disclosed share of each rarity against the observed share in the simulated openings.')}
    ${table(
      ['Rarity', 'Disclosed', 'Observed', 'Items', 'Deviation'],
      a.rarities.map((r) => [r.rarity, `${pct(r.disclosed)} %`, `${pct(r.observed)} %`, r.count, r.deviation.toFixed(4)]),
      'simulation',
    )}
    <p>
      Chi-square p-value: rarities <strong data-testid="p-rarities">${a.chi_square_p_value.rarities.toFixed(4)}</strong>, collectibles
      ${a.chi_square_p_value.collectibles.toFixed(4)}${a.seed ? html` · seed <code>${a.seed}</code>` : ''}${
        a.pity ? html` · pity on ${a.pity.rarity}: ${a.pity.guaranteed} guaranteed of ${a.pity.hits} hits` : ''
      }
    </p>
    ${a.complete_gachas.map((g) =>
      notice(
        'warning',
        `Complete gacha: collection ${g.collection} rewards its completion, and ${g.collectibles.join(', ')} only come from paid chests (${g.chests.join(', ')}). Refused at load under forbid_complete_gacha or the JP rule pack: ${g.advice}.`,
      ),
    )}`;
}

/** GET /console/chests/:id: the chest's name and observed drops, asked together. */
async function chestPage(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  if (!UUID.test(id)) return p.view('Chests', '/console/chests', notice('error', 'No such chest.'), 404);
  const [a, drops] = await Promise.all([
    p.api({ method: 'get', path: '/api/v1/chests/{id}', success: 200, shape: ChestDocument }, { params: { id } }),
    p.api({ method: 'get', path: '/api/v1/admin/chests/{id}/drops', success: 200, shape: ChestDropsDocument }, { params: { id } }),
  ]);
  if (!a.ok) return p.failed('Chest', '/console/chests', a);
  if (!drops.ok) return p.failed('Chest', '/console/chests', drops);
  return p.view(a.doc.data.attributes.name ?? id, '/console/chests', chestBody(id, drops.doc.data.attributes));
}

/** htmx: a simulation run (POST /console/chests/:id/simulation), as a fragment; a refusal shows its errors in place. */
async function simulationFragment(p: ConsolePage) {
  const form = formOf(p.request);
  const attributes: { opens: number; seed?: string } = { opens: form.opens ? Number(form.opens) : 10_000 };
  if (form.seed) attributes.seed = String(form.seed);
  const a = await p.api(
    { method: 'post', path: '/api/v1/admin/chests/{id}/simulation', success: 200, shape: SimulationDocument },
    { params: { id: paramOf(p.request, 'id') }, json: { data: { type: 'simulation', attributes } } },
  );
  if (!a.ok) return sendHtml(p.reply, errorBody(errorLines(a)));
  return sendHtml(p.reply, simulationBody(a.doc.data.attributes));
}

/** A chest's odds page and its simulation fragment. */
export function chestOddsRoutes(app: FastifyInstance) {
  app.get('/chests/:id', signedIn(chestPage));
  app.post('/chests/:id/simulation', signedIn(simulationFragment));
}

import type { FastifyInstance } from 'fastify';
import { type Banner, BannerListDocument } from '../../resources/banners.js';
import { CollectibleDocument } from '../../resources/collections.js';
import { BannerStatsDocument } from '../../resources/studio-banners.js';
import { html, type SafeHtml } from '../html.js';
import { chart, notice, pct, stat, table, when } from '../layout.js';
import { paramOf, signedIn, type ConsolePage } from '../signed-in.js';

type Stats = BannerStatsDocument['data']['attributes'];
type Share = Stats['real']['featured_share'];

/** A banner id as the API takes it (a slug); anything else is no banner. */
const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** A share with its 95 % interval: `66.67 % (61.2–71.8)`; a dash before any item. */
const shareText = (s: Share, items: number) =>
  items === 0 ? '—' : `${pct(s.share)} %${s.low !== null && s.high !== null ? ` (95 %: ${pct(s.low)}–${pct(s.high)})` : ''}`;
/** Expected or mean pulls, one decimal; a dash for never. */
const pulls = (x: number | null) => (x === null ? '—' : x.toFixed(1));
const count = (n: number) => n.toLocaleString('en');

/** The window as a phrase: from … to … (UTC). */
const windowText = (b: { starts_at: string; ends_at: string }) => `${when(b.starts_at)} to ${when(b.ends_at)} UTC`;

/** The banners list: active and coming banners, each linked to its page. */
export function bannersBody(banners: Banner[]): SafeHtml {
  if (banners.length === 0)
    return notice('empty', "No active or coming banner: load content with banners (Content). An ended banner's page stays at /console/banners/<id>.");
  return table(
    [{ label: 'Banner', key: true }, 'Window (UTC)', { label: 'State', key: true }, 'Featured', 'Spark', { label: '', key: true }],
    banners.map((b) => {
      const a = b.attributes;
      return [
        a.name,
        `${when(a.starts_at)} – ${when(a.ends_at)}`,
        a.active ? 'active' : 'coming',
        `${a.featured.collectibles.join(', ')} (${a.featured.rarity}, ${pct(a.featured.share)} %${a.guarantee ? ', guarantee' : ''})`,
        a.spark ? `${a.spark.cost} pulls` : '—',
        html`<a href="/console/banners/${b.id}" data-testid="banner-link">Pulls and odds</a>`,
      ];
    }),
    'banners',
  );
}

/** What the banner is: window, chest, featured collectibles, guarantee, spark, floor. */
function bannerFacts(id: string, a: Stats, names: Map<string, string>): SafeHtml {
  const b = a.banner;
  const featured = b.featured.collectibles.map((c) => (names.get(c) ? `${names.get(c)} (${c})` : c)).join(', ');
  return html`<p data-testid="banner-window">
      <strong>${b.active ? 'Active' : Date.parse(b.ends_at) <= Date.now() ? 'Ended' : 'Coming'}</strong> · ${windowText(b)} · pulls
      <a href="/console/chests/${a.chest.id}" data-testid="banner-chest">${a.chest.name}</a> (rules v${a.chest.rules_version})
    </p>
    ${table(
      [{ label: 'Rule', key: true }, 'Setting'],
      [
        ['Featured', html`<span data-testid="banner-featured">${featured}</span> · ${b.featured.rarity} · ${pct(b.featured.share)} % of that rarity`],
        ['Guarantee', b.guarantee ? 'Yes: after an off-banner item of the rarity, the next one is featured (carried over in the pity group)' : 'No'],
        [
          'Spark',
          html`<span data-testid="banner-spark"
            >${
              b.spark
                ? `${b.spark.cost} points (one per pull in the pity group) for a featured collectible of choice; left when the group's last banner ends: ${b.spark.currency ? `converted to ${b.spark.currency}` : 'lapse'}`
                : 'None'
            }</span
          >`,
        ],
        [
          'Ten-pull floor',
          html`<span data-testid="banner-floor">${b.ten_pull_floor ? `${b.ten_pull_floor} or better in every ten-pull` : 'None'}</span>`,
        ],
        ['Pity group', b.pity_group === id ? `${b.pity_group} (its own)` : b.pity_group],
      ],
      'banner-rules',
    )}`;
}

/** The featured share: disclosed, its long run, the simulation's and the real pulls' (when they drew any item of the rarity). */
function featuredChart(a: Stats): SafeHtml {
  const { real, disclosed: d, simulation: s } = a;
  const bars = [
    { label: 'Disclosed (share)', value: d.share },
    { label: 'Long run (disclosed)', value: d.long_run_share },
    { label: 'Simulation', value: s.featured_share.share },
    ...(real.featured_rarity_items > 0 ? [{ label: 'Real pulls', value: real.featured_share.share }] : []),
  ];
  return chart(
    'featured-chart',
    {
      type: 'bar',
      percent: true,
      labels: bars.map((x) => x.label),
      datasets: [{ label: `Featured % of ${a.banner.featured.rarity} items`, data: bars.map((x) => pct(x.value)) }],
    },
    `Share of featured collectibles among ${a.banner.featured.rarity} items: disclosed, its long-run value with the guarantee, the simulation and the real pulls.`,
  );
}

/** Disclosed, simulated and real side by side: the featured share as a chart, every quantity in a table. */
function sideBySide(a: Stats): SafeHtml {
  const { real, disclosed: d, simulation: s } = a;
  const spark = a.banner.spark;
  const cell = (testid: string, v: string | number) => html`<span data-testid="${testid}">${v}</span>`;
  return html`${featuredChart(a)}
    ${table(
      [{ label: '', key: true }, { label: 'Disclosed', key: true }, 'Simulation', { label: 'Real pulls', key: true }],
      [
        ['Pulls', '—', cell('sim-pulls', count(s.pulls)), cell('real-pulls', count(real.pulls))],
        ['Players', '—', count(s.players), cell('real-players', count(real.players))],
        [
          `Items of the featured rarity (${a.banner.featured.rarity})`,
          '—',
          count(s.featured_rarity_items),
          cell('real-rarity-items', count(real.featured_rarity_items)),
        ],
        ['Featured among them', '—', count(s.featured_items), cell('real-featured-items', count(real.featured_items))],
        [
          'Featured share',
          cell('disclosed-share', `${pct(d.share)} % (long run ${pct(d.long_run_share)} %)`),
          cell('sim-share', shareText(s.featured_share, s.featured_rarity_items)),
          cell('real-share', shareText(real.featured_share, real.featured_rarity_items)),
        ],
        [
          'Pulls to the first featured',
          cell(
            'disclosed-pulls',
            `${pulls(d.expected_pulls_to_featured.with_guarantee)} with the guarantee, ${pulls(d.expected_pulls_to_featured.without_guarantee)} without`,
          ),
          cell('sim-first', `${pulls(s.first_featured.mean)} (${count(s.first_featured.players)} players)`),
          '—',
        ],
        ['Guarantees used', '—', '—', cell('real-guarantees', count(real.guarantees_used))],
        ['Floor re-rolls', '—', '—', cell('real-floor', count(real.floor_rerolls))],
        [
          'Spark',
          spark ? `${spark.cost} points` : '—',
          s.spark
            ? `${pulls(s.spark.with_spark)} pulls to ${s.spark.collectible} with it, ${pulls(s.spark.without_spark)} without; ${pct(s.spark.sparked)} % take it by the spark`
            : '—',
          cell('real-sparks', `${count(real.spark_exchanges)} exchanges · ${count(real.points_held)} points held`),
        ],
        ['Points settled at the end', '—', '—', cell('real-settled', `${count(real.points_settled)} (${count(real.players_settled)} players)`)],
      ],
      'banner-side-by-side',
    )}
    <p class="muted">
      Simulation: ${count(s.players)} players × ${count(s.pulls_per_player)} single pulls from a fresh standing on the chest's current rules, seed
      <code title="${s.seed}">${s.seed.slice(0, 16)}…</code> (every visit runs the same). Short histories read below the long run: each player's first
      ${a.banner.featured.rarity} is a plain ${pct(d.share)} % draw. Real pulls: the openings kept ${real.since ? `since ${when(real.since)}` : ''};
      the interval treats items as independent, which the guarantee makes only roughly true.
    </p>`;
}

/** Each featured collectible: how often the simulation and the real pulls gave it. */
function perCollectible(a: Stats, names: Map<string, string>): SafeHtml {
  const sim = new Map(a.simulation.collectibles.map((c) => [c.id, c.count]));
  const real = new Map(a.real.collectibles.map((c) => [c.id, c.count]));
  return table(
    [{ label: 'Featured collectible', key: true }, 'Simulation', { label: 'Real pulls', key: true }],
    a.banner.featured.collectibles.map((id) => [
      names.get(id) ?? id,
      count(sim.get(id) ?? 0),
      html`<span data-testid="real-${id}">${count(real.get(id) ?? 0)}</span>`,
    ]),
    'banner-collectibles',
  );
}

/** A banner's page body. */
export function bannerBody(id: string, a: Stats, names: Map<string, string>): SafeHtml {
  const real = a.real;
  return html`${bannerFacts(id, a, names)}
    <section class="stats">
      ${stat('Real pulls', count(real.pulls), 'stat-pulls')} ${stat('Players', count(real.players), 'stat-players')}
      ${stat('Featured share (real)', real.featured_rarity_items ? `${pct(real.featured_share.share)} %` : '—', 'stat-share')}
      ${stat('Long-run share (disclosed)', `${pct(a.disclosed.long_run_share)} %`, 'stat-long-run')}
    </section>
    ${real.pulls === 0 ? notice('empty', 'No player has pulled this banner yet (in the openings kept): real pulls appear here once they do.') : ''}
    <h2>Disclosed, simulated and real</h2>
    ${sideBySide(a)}
    <h2>Featured collectibles</h2>
    ${perCollectible(a, names)}`;
}

/** GET /console/banners/:id: the banner's stats, and the featured collectibles' names. */
async function bannerPage(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  if (!SLUG.test(id)) return p.view('Banners', '/console/banners', notice('error', 'No such banner.'), 404);
  const a = await p.api({ method: 'get', path: '/api/v1/admin/banners/{id}/stats', success: 200, shape: BannerStatsDocument }, { params: { id } });
  if (!a.ok) return p.failed('Banner', '/console/banners', a);
  const stats = a.doc.data.attributes;
  const named = await Promise.all(
    stats.banner.featured.collectibles.map((c) =>
      p.api({ method: 'get', path: '/api/v1/collectibles/{id}', success: 200, shape: CollectibleDocument }, { params: { id: c } }),
    ),
  );
  const names = new Map<string, string>();
  for (const n of named) if (n.ok) names.set(n.doc.data.id, n.doc.data.attributes.name ?? n.doc.data.id);
  return p.view(stats.banner.name, '/console/banners', bannerBody(id, stats, names));
}

/** The banners pages: the list and each banner's page. */
export function bannersRoutes(app: FastifyInstance) {
  app.get(
    '/banners',
    signedIn(async (p) => {
      const a = await p.api({ method: 'get', path: '/api/v1/banners', success: 200, shape: BannerListDocument });
      if (!a.ok) return p.failed('Banners', '/console/banners', a);
      return p.view('Banners', '/console/banners', bannersBody(a.doc.data));
    }),
  );
  app.get('/banners/:id', signedIn(bannerPage));
}

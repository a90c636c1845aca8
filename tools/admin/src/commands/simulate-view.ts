import type { ChiSquareTest, PitySummary, SharesRow } from '@ccs/shared';
import { renderTable } from '../table.js';
import type { SimulationDocument } from './simulate.js';

/** Collectibles listed in the text view when a chest has more (those furthest from their share; --json has all). */
const MAX_COLLECTIBLE_ROWS = 20;
/** Rows of the openings-between-hits histogram and of the soft-pity table at most. */
const MAX_HISTOGRAM_ROWS = 15;
const BAR_WIDTH = 30;

const count = (n: number) => n.toLocaleString('en-US');
const pct = (x: number) => `${(100 * x).toFixed(Math.abs(x) < 0.01 ? 3 : 2)}%`;
const pp = (x: number) => `${x >= 0 ? '+' : '-'}${(100 * Math.abs(x)).toFixed(Math.abs(x) < 0.0001 ? 4 : 3)} pp`;
const sigma = (z: number) => (Number.isFinite(z) ? `${z >= 0 ? '+' : ''}${z.toFixed(1)}σ` : 'impossible');
const pValue = (p: number) => (p >= 0.001 ? p.toFixed(3) : p.toExponential(1));

/** What a p-value says, for a game designer. */
export function verdict(p: number): string {
  if (p >= 0.01) return 'consistent with the disclosed odds';
  if (p >= 0.001) return 'borderline: run again, or with more openings';
  return 'NOT consistent with the disclosed odds: investigate';
}

const sharesCells = (r: SharesRow) => [pct(r.base), pct(r.effective), pct(r.observed), pp(r.difference), count(r.count), sigma(r.deviation)];
const SHARES_HEADER = ['base', 'long-run', 'observed', 'difference', 'count', 'deviation'];

function chiSquareLine(what: string, t: ChiSquareTest): string {
  const stat = Number.isFinite(t.statistic) ? t.statistic.toFixed(2) : 'infinite';
  return `Chi-square of the ${what} against the long-run shares: ${stat} with ${t.df} degrees of freedom, p = ${pValue(t.pValue)}: ${verdict(t.pValue)}.`;
}

/** Consecutive rows merged into at most `max` groups (`width` values each). */
function groups<T>(rows: T[], max: number): T[][] {
  const width = Math.max(1, Math.ceil(rows.length / max));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += width) out.push(rows.slice(i, i + width));
  return out;
}
const range = (a: number, b: number) => (a === b ? String(a) : `${a}-${b}`);
/** A label for a run of openings (or counters); past `hard` is the overflow entry (see PitySummary). */
const label = (a: number, b: number, hard: number) => (a > hard ? `>${hard}` : b > hard ? `${range(a, hard)}, >${hard}` : range(a, b));

/** The pity part: hits by kind, openings between hits (with a histogram), the hit rate through soft pity. */
function renderPity(p: PitySummary): string[] {
  const soft = p.softStart === null ? 'no soft pity' : `soft pity from counter ${p.softStart}, +${pct(p.softStep!)} per opening`;
  const lines = [
    `Pity: ${p.rarity} or better, hard ${p.hard} (${soft})`,
    `  ${count(p.hits)} hits: ${count(p.natural)} natural, ${count(p.soft)} in soft pity, ${count(p.guaranteed)} by the hard guarantee ` +
      `(${pct(p.guaranteedShare)} of hits; the disclosed odds make it ${pct(p.expectedGuaranteedShare)})`,
    `  openings between hits: min ${p.gap.min}, median ${p.gap.median}, p90 ${p.gap.p90}, max ${p.gap.max} ` +
      `(${p.gap.max <= p.hard ? `never above hard ${p.hard}` : `ABOVE hard ${p.hard}`}); mean ${p.gap.mean.toFixed(2)}, ` +
      `expected ${p.gap.expectedMean.toFixed(2)}; ${p.openSinceLastHit} opening(s) since the last hit`,
    '',
  ];
  const seen = p.gaps.filter((g) => g.hits > 0 || g.openings <= p.hard);
  const rows = groups(seen, MAX_HISTOGRAM_ROWS).map((g) => {
    const hits = g.reduce((s, x) => s + x.hits, 0);
    const share = g.reduce((s, x) => s + x.share, 0);
    const expected = g.reduce((s, x) => s + x.expectedShare, 0);
    return [label(g[0]!.openings, g.at(-1)!.openings, p.hard), count(hits), pct(share), pct(expected), '#'.repeat(Math.round(share * BAR_WIDTH))];
  });
  lines.push(...renderTable(['openings', 'hits', 'share', 'expected', ''], rows, [1, 2, 3]), '');
  if (p.softStart !== null) {
    // The hit rate before soft pity, through it counter by counter (grouped if long), and at the guarantee.
    const before = p.byCounter.slice(0, p.softStart);
    const window = p.byCounter.slice(p.softStart, p.hard - 1);
    const at = p.byCounter.slice(p.hard - 1);
    const rate = (g: typeof p.byCounter) => {
      const openings = g.reduce((s, x) => s + x.openings, 0);
      const hits = g.reduce((s, x) => s + x.hits, 0);
      const expected = openings ? g.reduce((s, x) => s + x.openings * x.expected, 0) / openings : g[0]!.expected;
      return [
        label(g[0]!.counter, g.at(-1)!.counter, p.hard - 1),
        count(openings),
        count(hits),
        openings ? pct(hits / openings) : '-',
        pct(expected),
      ];
    };
    const table = [before, ...groups(window, MAX_HISTOGRAM_ROWS - 2), at].filter((g) => g.length).map(rate);
    lines.push('Pity hit rate by counter (openings since the last hit), against the disclosed rules:');
    lines.push(...renderTable(['counter', 'openings', 'hits', 'observed', 'expected'], table, [1, 2, 3, 4]), '');
  }
  return lines;
}

/** `simulate` as text: the run, rarities, collectibles, chi-square tests and pity. */
export function renderSimulation(d: SimulationDocument): string[] {
  const lines = [
    `${d.chest.name} (${d.chest.slug}, ${d.chest.id}), content version ${d.chest.contentVersion}${d.chest.inCatalog ? '' : ', not in the catalog'}`,
    `${count(d.opens)} openings, ${count(d.items)} items (${d.itemsPerOpen.observed.toFixed(3)} per opening, expected ` +
      `${d.itemsPerOpen.expected.toFixed(3)}) in ${(d.elapsedMs / 1000).toFixed(1)} s; ` +
      (d.seed ? `seed ${d.seed} (rerun with the same --seed for the same result)` : 'cryptographic randomness (give --seed to reproduce a run)'),
    '',
    'Rarities, as shares of all items dropped (base: the odds at 0 openings since a pity hit; long-run: pity included):',
    ...renderTable(
      ['rarity', ...SHARES_HEADER],
      d.rarities.map((r) => [r.rarity, ...sharesCells(r)]),
      [1, 2, 3, 4, 5, 6],
    ),
    chiSquareLine('rarity counts', d.chiSquare.rarities),
    '',
  ];
  const shown =
    d.collectibles.length <= MAX_COLLECTIBLE_ROWS
      ? d.collectibles
      : [...d.collectibles].sort((a, b) => Math.abs(b.deviation) - Math.abs(a.deviation)).slice(0, MAX_COLLECTIBLE_ROWS);
  lines.push(
    d.collectibles.length <= MAX_COLLECTIBLE_ROWS
      ? 'Collectibles:'
      : `Collectibles: the ${MAX_COLLECTIBLE_ROWS} of ${d.collectibles.length} furthest from their long-run share (--json lists all):`,
    ...renderTable(
      ['collectible', 'rarity', ...SHARES_HEADER],
      shown.map((r) => [r.id, r.rarity, ...sharesCells(r)]),
      [2, 3, 4, 5, 6, 7],
    ),
    chiSquareLine('collectible counts', d.chiSquare.collectibles),
    '',
  );
  lines.push(...(d.pity ? renderPity(d.pity) : ['Pity: none for this chest.']));
  for (const g of d.completeGachas)
    lines.push(
      '',
      `Complete gacha: collection ${g.collection} rewards its completion, and ${g.collectibles.join(', ')} only come from paid chests (${g.chests.join(', ')}).`,
      `  Refused at load under forbid_complete_gacha or the JP rule pack (docs/content.md, "No complete gacha"): ${g.advice}.`,
    );
  while (lines.at(-1) === '') lines.pop();
  return lines;
}

import { createHash } from 'node:crypto';
import { BannerListDocument } from '../../resources/banners.js';
import { ChestCatalogDocument } from '../../resources/chests.js';
import { OddsLogDocument } from '../../resources/chest-odds.js';
import type { FastifyInstance } from 'fastify';
import { html, type SafeHtml } from '../html.js';
import { notice, table, when } from '../layout.js';
import { signedIn, type ConsolePage } from '../signed-in.js';

type Entry = OddsLogDocument['data'][number];

/** Entries asked per page of the API (its most), and the most pages read for one view. */
const PAGE = 100;
const MAX_PAGES = 100;
/** The previous hash of an app's first entry. */
const GENESIS = '0'.repeat(64);

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Where a chain breaks: the entry's sequence number and why. */
export interface ChainBreak {
  seq: number;
  reason: string;
}

/**
 * What an entry logs, as its hash takes it: a chest entry's chest_type_id, a banner entry's
 * `banner:<banner_id>:`; and its key among the catalog's chests and banners.
 */
const hashedSubject = (a: Entry['attributes']): string => ('banner_id' in a ? `banner:${a.banner_id}:` : a.chest_type_id);
const subjectKey = (a: Entry['attributes']): string => ('banner_id' in a ? `banner:${a.banner_id}` : a.chest_type_id);

/**
 * Checks the odds log's chain by the rule the API documents and scripts/verify/odds-log.mjs checks
 * (docs/design.md §7): entries numbered from 1 with no gap, each `previous_hash` the entry before's
 * `entry_hash` (64 zeros for the first), and `entry_hash` = SHA-256 of previous_hash +
 * rules_sha256 + (chest_type_id, or `banner:` + banner_id + `:`) + rules_version + effective_at.
 * The first break found, or undefined.
 */
export function chainBreak(entries: Entry[]): ChainBreak | undefined {
  let previous = GENESIS;
  for (const [i, e] of entries.entries()) {
    const a = e.attributes;
    const seq = i + 1;
    if (e.id !== String(seq)) return { seq, reason: `entry ${seq} is numbered ${e.id}` };
    if (a.previous_hash !== previous) return { seq, reason: "its previous_hash is not the entry before's hash" };
    if (sha256(`${a.previous_hash}${a.rules_sha256}${hashedSubject(a)}${a.rules_version}${a.effective_at}`) !== a.entry_hash)
      return { seq, reason: 'its entry_hash is not the hash of its fields' };
    previous = a.entry_hash;
  }
  return undefined;
}

/** What the catalog (chests by id, banners by `banner:<id>`) says of an entry's subject: its name and the odds change it announces, if any. */
type Catalog = Map<string, { name: string; change?: { effective_at: string; rules_version: number } }>;

/**
 * An entry's state: `pending` while its effective time is ahead and the catalog announces it,
 * `replaced` when its time is ahead but a later load replaced or cancelled it (it never takes
 * effect), `effective` once its time has passed.
 */
export function stateOf(e: Entry, catalog: Catalog, now: number): 'pending' | 'replaced' | 'effective' {
  const a = e.attributes;
  if (Date.parse(a.effective_at) <= now) return 'effective';
  return catalog.get(subjectKey(a))?.change?.effective_at === a.effective_at ? 'pending' : 'replaced';
}

/** Whether the chain verifies, or where it breaks. */
const chainNotice = (count: number, broken: ChainBreak | undefined): SafeHtml =>
  broken
    ? notice(
        'error',
        html`<strong data-testid="chain-status">Chain broken at entry ${broken.seq}</strong>: ${broken.reason}. The log cannot be trusted from there
          on.`,
      )
    : notice(
        'success',
        html`<strong data-testid="chain-status">Chain verifies</strong>: all ${count} entries are linked and each hash matches its fields (SHA-256, as
          <code>scripts/verify-opening.mjs --odds-log</code> checks).`,
      );

/** The odds log: whether its chain verifies, the changes pending, and every entry, newest first. */
export function oddsLogBody(entries: Entry[], total: number, catalog: Catalog, now = Date.now()): SafeHtml {
  if (entries.length === 0) return notice('empty', 'The odds log is empty: it starts with the first content loaded with chests (Content).');
  const broken = chainBreak(entries);
  const states = entries.map((e) => stateOf(e, catalog, now));
  const pending = entries.filter((_e, i) => states[i] === 'pending');
  const name = (a: Entry['attributes']) => catalog.get(subjectKey(a))?.name ?? ('banner_id' in a ? `Banner ${a.banner_id}` : a.chest_type_id);
  return html`${chainNotice(entries.length, broken)}
    ${entries.length < total ? notice('warning', `Only the first ${entries.length} of ${total} entries were read and checked.`) : ''}
    <h2>Pending changes</h2>
    ${
      pending.length
        ? table(
            [
              { label: 'Chest or banner', key: true },
              { label: 'Rules version', key: true },
              { label: 'Takes effect (UTC)', key: true },
            ],
            pending.map((e) => [
              name(e.attributes),
              html`<span data-testid="pending-version">${e.attributes.rules_version}</span>`,
              html`<span data-testid="pending-effective">${when(e.attributes.effective_at)}</span>`,
            ]),
            'pending-changes',
          )
        : notice('empty', 'No odds change is waiting out its notice period.')
    }
    <h2>Entries</h2>
    ${table(
      [
        { label: '#', key: true },
        { label: 'Chest or banner', key: true },
        'Rules version',
        'Effective (UTC)',
        { label: 'State', key: true },
        { label: 'Entry hash', wrap: true },
      ],
      entries
        .map((e, i) => [
          e.id,
          name(e.attributes),
          e.attributes.rules_version,
          when(e.attributes.effective_at),
          html`<span data-testid="entry-state">${states[i]}</span>`,
          html`<code title="${e.attributes.entry_hash}">${e.attributes.entry_hash.slice(0, 16)}…</code>`,
        ])
        .reverse(),
      'odds-log',
    )}`;
}

/** GET /console/odds-log: the whole log (pages of the API in turn) and the catalog's and the banners' names and announcements. */
async function oddsLogPage(p: ConsolePage) {
  const entries: Entry[] = [];
  let total = 0;
  for (let i = 0; i < MAX_PAGES; i++) {
    const a = await p.api(
      { method: 'get', path: '/api/v1/odds-log', success: 200, shape: OddsLogDocument },
      { query: `page[limit]=${PAGE}&page[offset]=${entries.length}` },
    );
    if (!a.ok) return p.failed('Odds log', '/console/chests', a);
    entries.push(...a.doc.data);
    total = a.doc.meta.total_count;
    if (a.doc.data.length === 0 || entries.length >= total) break;
  }
  const chests = await p.api({ method: 'get', path: '/api/v1/chests', success: 200, shape: ChestCatalogDocument }, { query: 'page[limit]=100' });
  if (!chests.ok) return p.failed('Odds log', '/console/chests', chests);
  const banners = await p.api({ method: 'get', path: '/api/v1/banners', success: 200, shape: BannerListDocument });
  if (!banners.ok) return p.failed('Odds log', '/console/chests', banners);
  const catalog: Catalog = new Map([
    ...chests.doc.data.map(
      (c) => [c.id, { name: c.attributes.name ?? c.id, ...(c.meta.odds_change ? { change: c.meta.odds_change } : {}) }] as const,
    ),
    ...banners.doc.data.map(
      (b) => [`banner:${b.id}`, { name: `Banner ${b.attributes.name}`, ...(b.meta.odds_change ? { change: b.meta.odds_change } : {}) }] as const,
    ),
  ]);
  return p.view('Odds log', '/console/chests', oddsLogBody(entries, total, catalog));
}

/** The odds log page. */
export function oddsLogRoutes(app: FastifyInstance) {
  app.get('/odds-log', signedIn(oddsLogPage));
}

import type { FastifyInstance } from 'fastify';
import { ContentDiffDocument, ContentLoadedDocument, ContentVersionsDocument } from '../../resources/studio-content.js';
import { errorLines } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { errorBody, notice, table, when } from '../layout.js';
import { formOf, paramOf, signedIn, type ConsolePage } from '../signed-in.js';

type Versions = ContentVersionsDocument['data'];
type Diff = ContentDiffDocument['data']['attributes'];

/** The stored versions, each but the current one linked to its diff. */
const versionsTable = (list: Versions) =>
  list.length
    ? table(
        ['Version', 'Loaded', 'Collections', 'Collectibles', 'Chests', ''],
        list.map((v) => [
          html`<span data-testid="version-${v.attributes.version}">v${v.attributes.version}</span
            >${v.attributes.current ? html` <mark>current</mark>` : ''}`,
          when(v.attributes.loaded_at),
          v.attributes.counts.collections,
          v.attributes.counts.collectibles,
          v.attributes.counts.chests,
          v.attributes.current ? '' : html`<a href="/console/content/${v.attributes.version}/diff">Diff with current</a>`,
        ]),
        'versions',
      )
    : notice('empty', 'No stored versions yet.');

/** The content page: the result of a load (if any), the versions, and the load form (holding a refused draft). */
export function contentBody(list: Versions, result?: SafeHtml, draft = ''): SafeHtml {
  return html`${result ?? ''}
    <h2>Versions</h2>
    ${versionsTable(list)}
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

/** The diff's sections by name, in the order the API gives them. */
const SECTION_LABELS: Record<Diff['sections'][number]['section'], string> = {
  currencies: 'Currencies',
  rarities: 'Rarities',
  collections: 'Collections',
  collectibles: 'Collectibles',
  chests: 'Chests',
  players: 'Player rules',
  duplicates: 'Duplicate rules',
  compliance: 'Compliance',
  banners: 'Banners',
  store_products: 'Store products',
  store: 'Store settings',
  trading: 'Trading',
};

/** A changed item with what changed in it: `gems-500 (grants.currencies.gems, name)`. */
const changedItem = (id: string, fields: string[] | undefined) => (fields?.length ? `${id} (${fields.join(', ')})` : id);

/** What changed from a version to the current one, section by section, each changed item naming what changed in it. */
export function diffBody(a: Diff): SafeHtml {
  const rows = a.sections.map((s) => [
    html`<span data-testid="diff-section">${SECTION_LABELS[s.section] ?? s.section}</span>`,
    s.added.join(', ') || '—',
    s.removed.join(', ') || '—',
    html`<span data-testid="diff-changed-${s.section}">${s.changed.map((id) => changedItem(id, s.changed_fields[id])).join('; ') || '—'}</span>`,
  ]);
  return html`<p>From version ${a.from_version} to the current version ${a.to_version}.</p>
    ${
      rows.length === 0
        ? notice('empty', 'No differences.')
        : table(
            [
              { label: 'Section', key: true },
              { label: 'Added', wrap: true },
              { label: 'Removed', wrap: true },
              { label: 'Changed', wrap: true },
            ],
            rows,
            'diff',
          )
    }
    <p><a href="/console/content">Back to content</a></p>`;
}

/** The outcome of a load: a notice, the status to answer with, and the draft to show again when refused. */
interface LoadOutcome {
  result: SafeHtml;
  status: number;
  draft: string;
}

/** Validates and loads a pasted content file through the admin API. */
async function load(p: ConsolePage, text: string): Promise<LoadOutcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { result: errorBody([`The file is not valid JSON: ${why}`]), status: 422, draft: text };
  }
  const loaded = await p.api(
    { method: 'post', path: '/api/v1/admin/content', success: 201, shape: ContentLoadedDocument },
    { json: parsed, type: 'json' },
  );
  if (!loaded.ok) return { result: errorBody(errorLines(loaded)), status: loaded.status === 413 ? 413 : 422, draft: text };
  const version = loaded.doc.data.attributes.version;
  return { result: notice('success', `Loaded as version ${version}; each service applies it within moments.`), status: 200, draft: '' };
}

/** The content page, with the outcome of a load above the versions. */
async function contentPage(p: ConsolePage, outcome?: LoadOutcome) {
  const a = await p.api({ method: 'get', path: '/api/v1/admin/content', success: 200, shape: ContentVersionsDocument });
  if (!a.ok) return p.failed('Content', '/console/content', a);
  return p.view('Content', '/console/content', contentBody(a.doc.data, outcome?.result, outcome?.draft), outcome?.status);
}

/** GET /console/content/:version/diff. */
async function diffPage(p: ConsolePage) {
  const v = paramOf(p.request, 'version');
  const a = await p.api(
    { method: 'get', path: '/api/v1/admin/content/{version}/diff', success: 200, shape: ContentDiffDocument },
    { params: { version: v } },
  );
  if (!a.ok) return p.failed('Content diff', '/console/content', a);
  return p.view(`Content: v${v} → current`, '/console/content', diffBody(a.doc.data.attributes));
}

/** The content pages: versions, loading a file, and the diff of a version against the current one. */
export function contentRoutes(app: FastifyInstance) {
  app.get(
    '/content',
    signedIn((p) => contentPage(p)),
  );
  app.post(
    '/content',
    signedIn(async (p) => contentPage(p, await load(p, String(formOf(p.request).content ?? '')))),
  );
  app.get('/content/:version/diff', signedIn(diffPage));
}

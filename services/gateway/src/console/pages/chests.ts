import type { FastifyInstance } from 'fastify';
import { type Banner, BannerListDocument } from '../../resources/banners.js';
import { type CatalogChest, ChestCatalogDocument } from '../../resources/chests.js';
import { html, type SafeHtml } from '../html.js';
import { notice, table } from '../layout.js';
import { signedIn } from '../signed-in.js';
import { chestOddsRoutes } from './chest-odds.js';

/** The catalog, each chest linked to its odds page and to the page of each banner that pulls it. */
export function chestsBody(chests: CatalogChest[], banners: Banner[] = []): SafeHtml {
  if (chests.length === 0) return notice('empty', 'The app has no chest types in its catalog: load content with chests (Content).');
  const bannersOf = (chestId: string) => banners.filter((b) => b.relationships.chest_type.data.id === chestId);
  return table(
    [{ label: 'Chest', key: true }, 'Description', 'Price', { label: 'Banners', key: true }, { label: '', key: true }],
    chests.map((c) => [
      c.attributes.name ?? c.id,
      c.attributes.description ?? '',
      Object.entries(c.meta.price)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ') || '—',
      bannersOf(c.id).length
        ? html`${bannersOf(c.id).map((b, i) => html`${i ? ', ' : ''}<a href="/console/banners/${b.id}" data-testid="chest-banner-link">${b.attributes.name}</a>`)}`
        : '—',
      html`<a href="/console/chests/${c.id}">Odds and simulation</a>`,
    ]),
    'chests',
  );
}

/** The chests pages: the catalog (with the banners pulling each chest), then each chest's odds (chest-odds.ts). */
export function chestsRoutes(app: FastifyInstance) {
  app.get(
    '/chests',
    signedIn(async (p) => {
      const [a, banners] = await Promise.all([
        p.api({ method: 'get', path: '/api/v1/chests', success: 200, shape: ChestCatalogDocument }, { query: 'page[limit]=100' }),
        p.api({ method: 'get', path: '/api/v1/banners', success: 200, shape: BannerListDocument }),
      ]);
      if (!a.ok) return p.failed('Chests', '/console/chests', a);
      return p.view(
        'Chests',
        '/console/chests',
        html`<p>
            <a href="/console/odds-log" data-testid="odds-log-link">Odds log</a>: every change of the chests' rules, whether its hash chain verifies,
            and the changes waiting out their notice period.
          </p>
          ${chestsBody(a.doc.data, banners.ok ? banners.doc.data : [])}`,
      );
    }),
  );
  chestOddsRoutes(app);
}

import type { FastifyInstance } from 'fastify';
import { AuditLogDocument } from '../../resources/studio-audit.js';
import { html, type SafeHtml } from '../html.js';
import { notice, table, when } from '../layout.js';
import { queryOf, signedIn } from '../signed-in.js';

/** Entries per page of the audit log. */
const LIMIT = 50;

/** A page of the audit log (the admin API's actions, each with the note it was given), with links to newer and older entries. */
export function auditBody(doc: AuditLogDocument, offset: number, limit: number): SafeHtml {
  const total = doc.meta.total_count;
  return html`${
      doc.data.length
        ? table(
            [
              'When',
              { label: 'Who', wrap: true },
              { label: 'What', key: true },
              { label: 'Target', wrap: true },
              { label: 'Status', key: true },
              { label: 'Note', key: true },
            ],
            doc.data.map((e) => [
              when(e.attributes.at),
              e.attributes.actor,
              e.attributes.action,
              e.attributes.target,
              e.attributes.status,
              html`<span data-testid="audit-note">${e.attributes.note ?? '—'}</span>`,
            ]),
            'audit',
          )
        : notice('empty', 'No admin actions recorded yet (reads are not recorded).')
    }
    <nav aria-label="pages">
      <ul>
        ${offset > 0 ? html`<li><a href="/console/audit?offset=${Math.max(0, offset - limit)}">Newer</a></li>` : ''}
        ${offset + limit < total ? html`<li><a href="/console/audit?offset=${offset + limit}">Older</a></li>` : ''}
        <li class="muted">${total} entries</li>
      </ul>
    </nav>`;
}

/** GET /console/audit?offset=: the app's audit log, newest first. */
export function auditRoutes(app: FastifyInstance) {
  app.get(
    '/audit',
    signedIn(async (p) => {
      const offset = Math.max(0, Math.floor(Number(queryOf(p.request, 'offset') || 0)) || 0);
      const a = await p.api(
        { method: 'get', path: '/api/v1/admin/audit', success: 200, shape: AuditLogDocument },
        { query: `page[limit]=${LIMIT}&page[offset]=${offset}` },
      );
      if (!a.ok) return p.failed('Audit log', '/console/audit', a);
      return p.view('Audit log', '/console/audit', auditBody(a.doc, offset, LIMIT));
    }),
  );
}

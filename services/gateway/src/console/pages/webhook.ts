import type { FastifyInstance } from 'fastify';
import { errorLines, type Schemas } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { errorBody, notice, table, when } from '../layout.js';
import { paramOf, queryOf, sendHtml, signedIn, type ConsolePage } from '../signed-in.js';

type Endpoint = Schemas['WebhookEndpoint'];
type Delivery = Schemas['WebhookDelivery'];
type Cell = SafeHtml | string | number | null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES = ['pending', 'delivered', 'parked'] as const;
const NO_SUCH_ENDPOINT = 'No such webhook endpoint in this app.';

/** One delivery's cells; a delivered or parked one can be sent again in place (htmx). */
export function deliveryRow(endpointId: string, d: Delivery): Cell[] {
  const a = d.attributes;
  return [
    when(a.created_at),
    a.event_type,
    html`<span data-testid="status-${d.id}">${a.status}</span>`,
    a.attempts,
    a.last_status_code,
    a.last_error,
    a.status === 'pending'
      ? when(a.next_attempt_at)
      : html`<form class="inline" hx-post="/console/webhooks/${endpointId}/deliveries/${d.id}/retry" hx-target="closest tr" hx-swap="outerHTML">
          <button type="submit" data-testid="retry-${d.id}">${a.status === 'parked' ? 'Retry' : 'Send again'}</button>
        </form>`,
  ];
}

/** One delivery as a table row (the fragment a retry answers). */
export const deliveryRowHtml = (endpointId: string, d: Delivery): SafeHtml =>
  html`<tr>
    ${deliveryRow(endpointId, d).map((c) => html`<td>${c ?? '—'}</td>`)}
  </tr>`;

/** The endpoint's buttons: enable or disable, rotate its secret, remove it. */
const actions = (e: Endpoint) =>
  html`<div class="grid-2">
    <form method="post" action="/console/webhooks/${e.id}/toggle" class="inline">
      <button type="submit" class="secondary">${e.attributes.enabled ? 'Disable' : 'Enable'}</button>
    </form>
    <form method="post" action="/console/webhooks/${e.id}/rotate" class="inline">
      <button type="submit" class="secondary">Rotate secret</button>
    </form>
    <form method="post" action="/console/webhooks/${e.id}/delete" class="inline">
      <button type="submit" class="contrast">Remove endpoint</button>
    </form>
  </div>`;

/** Links filtering the deliveries by status, with the endpoint's count of each. */
const filters = (e: Endpoint, status: string | undefined) =>
  html`<nav aria-label="delivery status">
    <ul>
      ${(['all', ...STATUSES] as const).map(
        (f) =>
          html`<li>
            <a href="/console/webhooks/${e.id}${f === 'all' ? '' : `?status=${f}`}" ${(status ?? 'all') === f ? html`aria-current="page"` : ''}
              >${f}${f === 'all' ? '' : ` (${e.attributes.deliveries[f]})`}</a
            >
          </li>`,
      )}
    </ul>
  </nav>`;

/** One endpoint's page: a new secret (shown once), its settings and actions, its deliveries. */
export function webhookBody(e: Endpoint, deliveries: Delivery[], status: string | undefined, secret?: string): SafeHtml {
  const a = e.attributes;
  return html`${
      secret
        ? notice(
            'success',
            html`New signing secret, shown only now:
              <p class="secret" data-testid="new-secret">${secret}</p>`,
          )
        : ''
    }
    <p>
      <code>${a.url}</code> · ${a.events.length ? a.events.join(', ') : 'all events'} · ${a.enabled ? 'enabled' : 'disabled'} · secret
      ${a.secret_hint}
    </p>
    ${actions(e)} ${filters(e, status)}
    ${
      deliveries.length
        ? table(
            ['Created', 'Event', 'Status', 'Attempts', 'HTTP', 'Last error', 'Next / action'],
            deliveries.map((d) => deliveryRow(e.id, d)),
            'deliveries',
          )
        : notice('empty', status ? `No ${status} deliveries.` : 'No deliveries yet: events of the app after the endpoint was added appear here.')
    }`;
}

/** One endpoint, from the list (the admin API lists them whole). */
async function endpointOf(p: ConsolePage, id: string) {
  const answer = await p.api({ method: 'get', path: '/api/v1/admin/webhooks', success: 200 });
  return { answer, endpoint: answer.ok ? answer.doc.data.find((e) => e.id === id) : undefined };
}

/** The endpoint's page, its deliveries filtered by `?status=`; `secret` right after a rotation. */
async function webhookPage(p: ConsolePage, id: string, secret?: string) {
  const status = STATUSES.find((s) => s === queryOf(p.request, 'status'));
  const { answer, endpoint } = await endpointOf(p, id);
  if (!answer.ok) return p.failed('Webhook', '/console/webhooks', answer);
  if (!endpoint) return p.view('Webhook', '/console/webhooks', notice('error', NO_SUCH_ENDPOINT), 404);
  const d = await p.api(
    { method: 'get', path: '/api/v1/admin/webhooks/{id}/deliveries', success: 200 },
    { params: { id }, query: `page[limit]=50${status ? `&filter[status]=${status}` : ''}` },
  );
  if (!d.ok) return p.failed('Webhook', '/console/webhooks', d);
  return p.view('Webhook deliveries', '/console/webhooks', webhookBody(endpoint, d.doc.data, status, secret));
}

/** POST /console/webhooks/:id/{toggle,rotate,delete}. */
async function act(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  const action = paramOf(p.request, 'action');
  if (!UUID.test(id) || !['toggle', 'rotate', 'delete'].includes(action)) return p.reply.callNotFound();
  if (action === 'delete') {
    const r = await p.api({ method: 'delete', path: '/api/v1/admin/webhooks/{id}', success: 204 }, { params: { id } });
    if (!r.ok) return p.failed('Webhook', '/console/webhooks', r);
    return p.reply.redirect('/console/webhooks', 303);
  }
  const { endpoint } = await endpointOf(p, id);
  if (!endpoint) return p.view('Webhook', '/console/webhooks', notice('error', NO_SUCH_ENDPOINT), 404);
  const attributes = action === 'rotate' ? { rotate_secret: true } : { enabled: !endpoint.attributes.enabled };
  const r = await p.api(
    { method: 'patch', path: '/api/v1/admin/webhooks/{id}', success: 200 },
    { params: { id }, json: { data: { type: 'webhook_endpoint', attributes } } },
  );
  if (!r.ok) return p.failed('Webhook', '/console/webhooks', r);
  if (action === 'rotate') return webhookPage(p, id, r.doc.data.attributes.secret);
  return p.reply.redirect(`/console/webhooks/${id}`, 303);
}

/** htmx: retries a delivery and answers its updated row (or its errors, in a row). */
async function retry(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  const r = await p.api(
    { method: 'post', path: '/api/v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry', success: 202 },
    { params: { id, delivery_id: paramOf(p.request, 'delivery') } },
  );
  if (!r.ok)
    return sendHtml(
      p.reply,
      html`<tr>
        <td colspan="7">${errorBody(errorLines(r))}</td>
      </tr>`,
    );
  return sendHtml(p.reply, deliveryRowHtml(id, r.doc.data));
}

/** One endpoint's pages: its deliveries, its actions, a delivery's retry. */
export function webhookRoutes(app: FastifyInstance) {
  app.get(
    '/webhooks/:id',
    signedIn(async (p) => {
      const id = paramOf(p.request, 'id');
      if (!UUID.test(id)) return p.view('Webhook', '/console/webhooks', notice('error', NO_SUCH_ENDPOINT), 404);
      return webhookPage(p, id);
    }),
  );
  app.post('/webhooks/:id/:action', signedIn(act));
  app.post('/webhooks/:id/deliveries/:delivery/retry', signedIn(retry));
}

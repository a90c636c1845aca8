import type { FastifyInstance } from 'fastify';
import {
  type WebhookDelivery,
  WebhookDeliveryDocument,
  WebhookDeliveryListDocument,
  type WebhookEndpoint,
  WebhookEndpointDocument,
  WebhookEndpointListDocument,
} from '../../resources/webhooks.js';
import { html, type SafeHtml } from '../html.js';
import { notice, table, when } from '../layout.js';
import { formOf, paramOf, queryOf, signedIn, type ConsolePage } from '../signed-in.js';

type Endpoint = WebhookEndpoint;
type Delivery = WebhookDelivery;
type Cell = SafeHtml | string | number | null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES = ['pending', 'delivered', 'parked'] as const;
const NO_SUCH_ENDPOINT = 'No such webhook endpoint in this app.';

/** One delivery's cells; a delivered or parked one can be sent again (the page comes back with its counts re-read). */
export function deliveryRow(endpointId: string, d: Delivery, status: string | undefined): Cell[] {
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
      : html`<form class="inline" method="post" action="/console/webhooks/${endpointId}/deliveries/${d.id}/retry">
          ${status ? html`<input type="hidden" name="status" value="${status}" />` : ''}
          <button type="submit" data-testid="retry-${d.id}">${a.status === 'parked' ? 'Retry' : 'Send again'}</button>
        </form>`,
  ];
}

/** The endpoint's buttons: enable or disable, rotate its secret, remove it (which asks first). */
const actions = (e: Endpoint) =>
  html`<div class="actions">
    <form method="post" action="/console/webhooks/${e.id}/toggle" class="inline">
      <button type="submit" class="secondary">${e.attributes.enabled ? 'Disable' : 'Enable'}</button>
    </form>
    <form method="post" action="/console/webhooks/${e.id}/rotate" class="inline">
      <button type="submit" class="secondary">Rotate secret</button>
    </form>
    <form method="post" action="/console/webhooks/${e.id}/delete" class="inline" data-testid="remove-form">
      <button type="submit" class="contrast">Remove endpoint…</button>
    </form>
  </div>`;

/**
 * The second step of removing an endpoint: what goes with it, a button that posts the endpoint's id
 * back as `confirm` (the server removes nothing without it) and a way back.
 */
export function removeBody(e: Endpoint): SafeHtml {
  const d = e.attributes.deliveries;
  return html`${notice(
      'warning',
      html`Remove the endpoint <code>${e.attributes.url}</code>? It stops receiving events at once, and its deliveries (${d.pending} pending,
        ${d.delivered} delivered, ${d.parked} parked) go with it. This cannot be undone.`,
    )}
    <div class="actions">
      <form method="post" action="/console/webhooks/${e.id}/delete" class="inline" data-testid="confirm-remove">
        <input type="hidden" name="confirm" value="${e.id}" />
        <button type="submit" class="contrast">Yes, remove it</button>
      </form>
      <a href="/console/webhooks/${e.id}" role="button" class="secondary outline" data-testid="cancel-remove">Keep it</a>
    </div>`;
}

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
export function webhookBody(e: Endpoint, deliveries: Delivery[], status: string | undefined, secret?: string, retried = false): SafeHtml {
  const a = e.attributes;
  return html`${retried ? notice('success', 'Delivery queued to be sent again; the counts below are as of now.') : ''}${
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
            [
              'Created',
              'Event',
              { label: 'Status', key: true },
              { label: 'Attempts', key: true },
              'HTTP',
              { label: 'Last error', wrap: true },
              { label: 'Next / action', key: true },
            ],
            deliveries.map((d) => deliveryRow(e.id, d, status)),
            'deliveries',
          )
        : notice('empty', status ? `No ${status} deliveries.` : 'No deliveries yet: events of the app after the endpoint was added appear here.')
    }`;
}

/** One endpoint, from the list (the admin API lists them whole). */
async function endpointOf(p: ConsolePage, id: string) {
  const answer = await p.api({ method: 'get', path: '/api/v1/admin/webhooks', success: 200, shape: WebhookEndpointListDocument });
  return { answer, endpoint: answer.ok ? answer.doc.data.find((e) => e.id === id) : undefined };
}

/** The endpoint's page, its deliveries filtered by `?status=`; `secret` right after a rotation. */
async function webhookPage(p: ConsolePage, id: string, secret?: string) {
  const status = STATUSES.find((s) => s === queryOf(p.request, 'status'));
  const { answer, endpoint } = await endpointOf(p, id);
  if (!answer.ok) return p.failed('Webhook', '/console/webhooks', answer);
  if (!endpoint) return p.view('Webhook', '/console/webhooks', notice('error', NO_SUCH_ENDPOINT), 404);
  const d = await p.api(
    { method: 'get', path: '/api/v1/admin/webhooks/{id}/deliveries', success: 200, shape: WebhookDeliveryListDocument },
    { params: { id }, query: `page[limit]=50${status ? `&filter[status]=${status}` : ''}` },
  );
  if (!d.ok) return p.failed('Webhook', '/console/webhooks', d);
  const retried = UUID.test(queryOf(p.request, 'retried'));
  return p.view('Webhook deliveries', '/console/webhooks', webhookBody(endpoint, d.doc.data, status, secret, retried));
}

/** POST /console/webhooks/:id/{toggle,rotate,delete}; delete removes only with `confirm` = the id, else asks. */
async function act(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  const action = paramOf(p.request, 'action');
  if (!UUID.test(id) || !['toggle', 'rotate', 'delete'].includes(action)) return p.reply.callNotFound();
  const { answer, endpoint } = await endpointOf(p, id);
  if (!answer.ok) return p.failed('Webhook', '/console/webhooks', answer);
  if (!endpoint) return p.view('Webhook', '/console/webhooks', notice('error', NO_SUCH_ENDPOINT), 404);
  if (action === 'delete') {
    if (formOf(p.request).confirm !== id) return p.view('Remove webhook endpoint', '/console/webhooks', removeBody(endpoint));
    const r = await p.api({ method: 'delete', path: '/api/v1/admin/webhooks/{id}', success: 204 }, { params: { id } });
    if (!r.ok) return p.failed('Webhook', '/console/webhooks', r);
    return p.reply.redirect('/console/webhooks?removed=1', 303);
  }
  const attributes = action === 'rotate' ? { rotate_secret: true } : { enabled: !endpoint.attributes.enabled };
  const r = await p.api(
    { method: 'patch', path: '/api/v1/admin/webhooks/{id}', success: 200, shape: WebhookEndpointDocument },
    { params: { id }, json: { data: { type: 'webhook_endpoint', attributes } } },
  );
  if (!r.ok) return p.failed('Webhook', '/console/webhooks', r);
  if (action === 'rotate') return webhookPage(p, id, r.doc.data.attributes.secret);
  return p.reply.redirect(`/console/webhooks/${id}`, 303);
}

/**
 * POST .../deliveries/:delivery/retry: sends a delivery again, then back to the endpoint's page
 * (its status filter kept) so the counts and rows are read again; a refusal shows its errors there.
 */
async function retry(p: ConsolePage) {
  const id = paramOf(p.request, 'id');
  if (!UUID.test(id)) return p.view('Webhook', '/console/webhooks', notice('error', NO_SUCH_ENDPOINT), 404);
  const r = await p.api(
    { method: 'post', path: '/api/v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry', success: 202, shape: WebhookDeliveryDocument },
    { params: { id, delivery_id: paramOf(p.request, 'delivery') } },
  );
  if (!r.ok) return p.failed('Webhook', '/console/webhooks', r);
  const status = STATUSES.find((s) => s === formOf(p.request).status);
  return p.reply.redirect(`/console/webhooks/${id}?retried=${r.doc.data.id}${status ? `&status=${status}` : ''}`, 303);
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

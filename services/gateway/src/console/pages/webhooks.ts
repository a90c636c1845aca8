import type { FastifyInstance } from 'fastify';
import { type WebhookEndpoint, WebhookEndpointDocument, WebhookEndpointListDocument } from '../../resources/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '@ccs/shared';
import { errorLines } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { notice, table } from '../layout.js';
import { formOf, queryOf, signedIn, type ConsolePage } from '../signed-in.js';
import { webhookRoutes } from './webhook.js';

type Endpoint = WebhookEndpoint;

/** The endpoints with their delivery counts. */
const endpointsTable = (endpoints: Endpoint[]) =>
  endpoints.length
    ? table(
        [
          { label: 'URL', wrap: true },
          'Events',
          'Enabled',
          { label: 'Pending', key: true },
          { label: 'Delivered', key: true },
          { label: 'Parked', key: true },
          { label: '', key: true },
        ],
        endpoints.map((e) => [
          e.attributes.url,
          e.attributes.events.length ? e.attributes.events.join(', ') : 'all',
          e.attributes.enabled ? 'yes' : 'no',
          e.attributes.deliveries.pending,
          e.attributes.deliveries.delivered,
          html`<span data-testid="parked-${e.id}">${e.attributes.deliveries.parked}</span>`,
          html`<a href="/console/webhooks/${e.id}">Deliveries</a>`,
        ]),
        'webhooks',
      )
    : notice('empty', 'No webhook endpoints yet: add one below to receive events on your own backend.');

/** The form that adds an endpoint. */
const addForm = html`<h2>Add an endpoint</h2>
  <form method="post" action="/console/webhooks" data-testid="webhook-form">
    <label>URL <input type="url" name="url" required placeholder="https://game.example.com/hooks/ccs" /></label>
    <label>Description <input type="text" name="description" maxlength="500" /></label>
    <fieldset>
      <legend>Events (none checked: all)</legend>
      ${WEBHOOK_EVENT_TYPES.map((t) => html`<label><input type="checkbox" name="events" value="${t}" /> ${t}</label>`)}
    </fieldset>
    <button type="submit">Add endpoint</button>
  </form>`;

/** The webhooks page: a new endpoint's secret (shown once) or why it was refused, the endpoints, the form. */
export function webhooksBody(endpoints: Endpoint[], created?: { url: string; secret: string }, error?: string, removed = false): SafeHtml {
  return html`${removed ? notice('success', 'Endpoint removed.') : ''}${
    created
      ? notice(
          'success',
          html`Endpoint for <code>${created.url}</code> added. Its signing secret, shown only now:
            <p class="secret" data-testid="new-secret">${created.secret}</p>
            Verify each request with it (docs/webhooks.md).`,
        )
      : ''
  }
  ${error ? notice('error', error) : ''} ${endpointsTable(endpoints)} ${addForm}`;
}

/** POST /console/webhooks: adds an endpoint for the events checked (none: all). */
async function addEndpoint(p: ConsolePage) {
  const form = formOf(p.request);
  const events = [form.events ?? []].flat().flatMap((e) => WEBHOOK_EVENT_TYPES.filter((t) => t === e));
  const attributes = { url: String(form.url ?? ''), description: String(form.description ?? ''), events };
  const made = await p.api(
    { method: 'post', path: '/api/v1/admin/webhooks', success: 201, shape: WebhookEndpointDocument },
    { json: { data: { type: 'webhook_endpoint', attributes } } },
  );
  const a = await p.api({ method: 'get', path: '/api/v1/admin/webhooks', success: 200, shape: WebhookEndpointListDocument });
  if (!a.ok) return p.failed('Webhooks', '/console/webhooks', a);
  if (!made.ok) return p.view('Webhooks', '/console/webhooks', webhooksBody(a.doc.data, undefined, errorLines(made).join(' ')), 422);
  const created = { url: attributes.url, secret: made.doc.data.attributes.secret ?? '' };
  return p.view('Webhooks', '/console/webhooks', webhooksBody(a.doc.data, created));
}

/** The webhooks pages: the endpoints and adding one, then each endpoint's deliveries (webhook.ts). */
export function webhooksRoutes(app: FastifyInstance) {
  app.get(
    '/webhooks',
    signedIn(async (p) => {
      const a = await p.api({ method: 'get', path: '/api/v1/admin/webhooks', success: 200, shape: WebhookEndpointListDocument });
      if (!a.ok) return p.failed('Webhooks', '/console/webhooks', a);
      return p.view('Webhooks', '/console/webhooks', webhooksBody(a.doc.data, undefined, undefined, queryOf(p.request, 'removed') === '1'));
    }),
  );
  app.post('/webhooks', signedIn(addEndpoint));
  webhookRoutes(app);
}

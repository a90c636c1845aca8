import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AdminCreateWebhook,
  AdminDeleteWebhook,
  AdminListWebhookDeliveries,
  AdminListWebhooks,
  AdminRetryWebhookDelivery,
  AdminUpdateWebhook,
  paginationLinks,
  UuidSchema,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  WebhookUrlSchema,
  type ParsedQuery,
} from '@ccs/shared';
import { z } from 'zod';
import { baseUrl, jsonApiQuery, parseBody, sendDocument } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/webhooks.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { gatewayErrors } from '../../errors.js';
import {
  type WebhookDeliveryDocument,
  type WebhookDeliveryListDocument,
  type WebhookEndpointDocument,
  type WebhookEndpointListDocument,
  endpointResource,
  deliveryResource,
} from '../../resources/webhooks.js';

/**
 * The webhook part of the admin API (docs/webhooks.md): the app's endpoints and their deliveries,
 * registered inside the studio scope (secret key only; every call audited).
 */

const DELIVERIES_QUERY = { page: { defaultLimit: 20, maxLimit: 100 }, filter: { fields: ['status'] } };

const EventsSchema = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `events takes event types: ${WEBHOOK_EVENT_TYPES.join(', ')}` }))
  .max(WEBHOOK_EVENT_TYPES.length)
  .describe('The event types it receives; empty or absent: every type.');

const Attributes = z
  .object({
    url: WebhookUrlSchema.describe('Where the events are POSTed (http or https).'),
    description: z.string().max(500).optional().describe('A note for the studio, e.g. "analytics".'),
    events: EventsSchema.optional(),
    enabled: z.boolean().optional().describe('A disabled endpoint gets no new deliveries, and its pending ones wait.'),
  })
  .strict();

/** POST body: a new endpoint. */
export const CreateWebhookBody = z.object({
  data: z.object({ type: z.literal('webhook_endpoint', { error: 'data.type must be "webhook_endpoint".' }), attributes: Attributes }),
});

/** PATCH body: the attributes to change, and `rotate_secret` for a new signing secret. */
export const UpdateWebhookBody = z.object({
  data: z.object({
    type: z.literal('webhook_endpoint', { error: 'data.type must be "webhook_endpoint".' }),
    attributes: Attributes.partial()
      .extend({
        rotate_secret: z.boolean().optional().describe('Issue a new signing secret (answered once, in `secret`); the old one stops at once.'),
      })
      .strict(),
  }),
});

const ctxOf = (request: FastifyRequest) => ({ requestId: request.id, appId: request.tenant!.appId });

/** An endpoint id from the path: only a UUID can exist, anything else is not found. */
function endpointIdOf(request: FastifyRequest): string {
  const id = (request.params as Record<string, string>).id ?? '';
  if (!UuidSchema.safeParse(id).success) throw gatewayErrors.webhookNotFound();
  return id.toLowerCase();
}

/** `filter[status]=pending|delivered|parked` (400 for anything else). */
function statusFilter(q: ParsedQuery): (typeof WEBHOOK_DELIVERY_STATUSES)[number] | undefined {
  if (!q.filter) return undefined;
  const f = q.filter;
  if ('field' in f && f.op === 'eq' && typeof f.value === 'string' && (WEBHOOK_DELIVERY_STATUSES as readonly string[]).includes(f.value))
    return f.value as (typeof WEBHOOK_DELIVERY_STATUSES)[number];
  throw gatewayErrors.deliveryStatusFilter();
}

async function list(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const r = await request.server.bus.request(AdminListWebhooks, { appId: request.tenant!.appId }, ctxOf(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.endpoints.map((e) => endpointResource(e)),
    meta: { total_count: r.endpoints.length },
  } satisfies WebhookEndpointListDocument);
}

async function create(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const a = parseBody(CreateWebhookBody, request.body).data.attributes;
  const r = await request.server.bus.request(AdminCreateWebhook, { appId: request.tenant!.appId, ...a }, ctxOf(request));
  reply.header('cache-control', 'no-store');
  reply.header('location', `/api/v1/admin/webhooks/${r.endpoint.id}`);
  return sendDocument(reply, 201, {
    data: endpointResource(r.endpoint, r.secret),
    meta: { message: 'Keep the secret now: it is shown only in this answer (PATCH with rotate_secret issues a new one).' },
  } satisfies WebhookEndpointDocument);
}

async function update(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const endpointId = endpointIdOf(request);
  const { rotate_secret, ...a } = parseBody(UpdateWebhookBody, request.body).data.attributes;
  const r = await request.server.bus.request(
    AdminUpdateWebhook,
    { appId: request.tenant!.appId, endpointId, ...a, ...(rotate_secret ? { rotateSecret: true } : {}) },
    ctxOf(request),
  );
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, { data: endpointResource(r.endpoint, r.secret) } satisfies WebhookEndpointDocument);
}

async function remove(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const endpointId = endpointIdOf(request);
  await request.server.bus.request(AdminDeleteWebhook, { appId: request.tenant!.appId, endpointId }, ctxOf(request));
  return reply.code(204).send();
}

async function deliveries(request: FastifyRequest, reply: FastifyReply) {
  const endpointId = endpointIdOf(request);
  const q = jsonApiQuery(request, DELIVERIES_QUERY);
  const status = statusFilter(q);
  const r = await request.server.bus.request(
    AdminListWebhookDeliveries,
    { appId: request.tenant!.appId, endpointId, page: q.page, ...(status ? { status } : {}) },
    ctxOf(request),
  );
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  const base = baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL);
  return sendDocument(reply, 200, {
    data: r.deliveries.map(deliveryResource),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(base, `/api/v1/admin/webhooks/${endpointId}/deliveries`, rest, q.page, r.total),
  } satisfies Omit<WebhookDeliveryListDocument, 'links'> & { links: ReturnType<typeof paginationLinks> });
}

async function retry(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const endpointId = endpointIdOf(request);
  const deliveryId = (request.params as Record<string, string>).delivery_id ?? '';
  if (!UuidSchema.safeParse(deliveryId).success) throw gatewayErrors.webhookDeliveryNotFound();
  const r = await request.server.bus.request(
    AdminRetryWebhookDelivery,
    { appId: request.tenant!.appId, endpointId, deliveryId: deliveryId.toLowerCase() },
    ctxOf(request),
  );
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 202, {
    data: deliveryResource(r.delivery),
    meta: { message: 'The delivery is due now; its status shows how it went.' },
  } satisfies WebhookDeliveryDocument);
}

/** Registers the webhook routes in the studio scope (called by studioRoutes, so they share its audit hook). */
export async function webhookRoutes(app: FastifyInstance) {
  const doc = (d: Parameters<typeof documented>[0], extra: Parameters<typeof documented>[1] = { query: NO_QUERY }) => ({
    openapi: documented(d, extra),
  });
  app.get('/api/v1/admin/webhooks', { config: doc(docs.adminListWebhooks) }, list);
  app.post(
    '/api/v1/admin/webhooks',
    { config: { bodyType: 'jsonapi', ...doc(docs.adminCreateWebhook, { query: NO_QUERY, body: { schema: CreateWebhookBody, required: true } }) } },
    create,
  );
  app.patch(
    '/api/v1/admin/webhooks/:id',
    { config: { bodyType: 'jsonapi', ...doc(docs.adminUpdateWebhook, { query: NO_QUERY, body: { schema: UpdateWebhookBody, required: true } }) } },
    update,
  );

  app.get('/api/v1/admin/webhooks/:id/deliveries', { config: doc(docs.adminListWebhookDeliveries, { query: DELIVERIES_QUERY }) }, deliveries);
  // No body: none, or an empty one with the JSON:API media type; any other body is a 415.
  await app.register(async (noBody) => {
    allowEmptyJsonApiBody(noBody);
    noBody.delete('/api/v1/admin/webhooks/:id', { config: doc(docs.adminDeleteWebhook) }, remove);
    noBody.post('/api/v1/admin/webhooks/:id/deliveries/:delivery_id/retry', { config: doc(docs.adminRetryWebhookDelivery) }, retry);
  });
}

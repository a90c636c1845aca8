import { z } from 'zod';
import { UuidSchema, WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, type WebhookEndpointView, type WebhookDeliveryView } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, PageMeta, PaginationLinks, Timestamp } from './jsonapi.js';

/**
 * Response schemas of the webhook part of the admin API (docs/webhooks.md), with the functions that
 * render them, typed by those schemas.
 */

export const WebhookEndpoint = component(
  'WebhookEndpoint',
  "One of the app's webhook endpoints.",
  z.object({
    type: z.literal('webhook_endpoint'),
    id: UuidSchema,
    attributes: z.object({
      url: z.string(),
      description: z.string(),
      events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).describe('The event types it receives; empty: every type.'),
      enabled: z.boolean(),
      created_at: Timestamp,
      updated_at: Timestamp,
      secret_hint: z.string().describe('The end of the signing secret, to tell secrets apart.'),
      secret: z.string().optional().describe('The signing secret (`whsec_…`): only in the answer that created or rotated it.'),
      deliveries: z.object({ pending: Count, delivered: Count, parked: Count }).describe('Its deliveries by status.'),
    }),
  }),
);

export const WebhookEndpointDocument = component(
  'WebhookEndpointDocument',
  'One webhook endpoint.',
  z.object({ data: WebhookEndpoint, meta: z.object({ message: z.string() }).optional() }),
);

export const WebhookEndpointListDocument = component(
  'WebhookEndpointListDocument',
  "The app's webhook endpoints, oldest first.",
  z.object({ data: z.array(WebhookEndpoint), meta: z.object({ total_count: Count }) }),
);

export const WebhookDelivery = component(
  'WebhookDelivery',
  'One event sent (or to be sent) to one endpoint.',
  z.object({
    type: z.literal('webhook_delivery'),
    id: UuidSchema,
    attributes: z.object({
      endpoint_id: UuidSchema,
      event_id: UuidSchema.describe('The event id (also in the body and the `CCS-Event-Id` header): receivers de-duplicate on it.'),
      event_type: z.enum(WEBHOOK_EVENT_TYPES),
      player_id: UuidSchema.nullable(),
      status: z
        .enum(WEBHOOK_DELIVERY_STATUSES)
        .describe(
          '`pending` (to be sent, or retried at `next_attempt_at`), `delivered` (a 2xx answer) or `parked` (retried for 24 h without success).',
        ),
      attempts: Count,
      created_at: Timestamp,
      next_attempt_at: Timestamp.nullable().describe('When it is tried next; null unless pending.'),
      last_attempt_at: Timestamp.nullable(),
      last_status_code: z
        .number()
        .int()
        .nullable()
        .describe("The receiver's last HTTP status; null for no answer (timeout, refused, tls, destination_forbidden)."),
      last_error: z
        .string()
        .nullable()
        .describe(
          "Why the last attempt failed, as an error class: `timeout` (no answer within the deadline), `refused` (no connection: refused, reset, or the name not found), `tls`, `destination_forbidden` (the URL leads to an address no webhook may reach; nothing was sent) or `http_<status>` (any answer but a 2xx, a 3xx included: redirects are not followed). Never the receiver's answer or its address. Null after a success or before a first outcome.",
        ),
      delivered_at: Timestamp.nullable(),
      body: z.string().describe('The request body as sent (JSON text, signed as is).'),
    }),
  }),
);

export const WebhookDeliveryDocument = component(
  'WebhookDeliveryDocument',
  'One webhook delivery.',
  z.object({ data: WebhookDelivery, meta: z.object({ message: z.string() }).optional() }),
);

export const WebhookDeliveryListDocument = component(
  'WebhookDeliveryListDocument',
  "A page of an endpoint's deliveries, newest first.",
  z.object({ data: z.array(WebhookDelivery), meta: z.object({ total_count: Count, page: PageMeta }), links: PaginationLinks }),
);

/** What `WebhookDelivery` describes, as the gateway renders it. */
export type WebhookDelivery = z.output<typeof WebhookDelivery>;
/** What `WebhookDeliveryDocument` describes, as the gateway renders it. */
export type WebhookDeliveryDocument = z.output<typeof WebhookDeliveryDocument>;
/** What `WebhookDeliveryListDocument` describes, as the gateway renders it. */
export type WebhookDeliveryListDocument = z.output<typeof WebhookDeliveryListDocument>;
/** What `WebhookEndpoint` describes, as the gateway renders it. */
export type WebhookEndpoint = z.output<typeof WebhookEndpoint>;
/** What `WebhookEndpointDocument` describes, as the gateway renders it. */
export type WebhookEndpointDocument = z.output<typeof WebhookEndpointDocument>;
/** What `WebhookEndpointListDocument` describes, as the gateway renders it. */
export type WebhookEndpointListDocument = z.output<typeof WebhookEndpointListDocument>;

/** An endpoint as the OpenAPI document's WebhookEndpoint. */
export function endpointResource(e: WebhookEndpointView, secret?: string): z.output<typeof WebhookEndpoint> {
  return {
    type: 'webhook_endpoint',
    id: e.id,
    attributes: {
      url: e.url,
      description: e.description,
      events: e.events,
      enabled: e.enabled,
      created_at: e.createdAt,
      updated_at: e.updatedAt,
      secret_hint: e.secretHint,
      ...(secret ? { secret } : {}),
      deliveries: e.deliveries,
    },
  };
}

/** A delivery as the OpenAPI document's WebhookDelivery. */
export function deliveryResource(d: WebhookDeliveryView): z.output<typeof WebhookDelivery> {
  return {
    type: 'webhook_delivery',
    id: d.id,
    attributes: {
      endpoint_id: d.endpointId,
      event_id: d.eventId,
      event_type: d.eventType,
      player_id: d.playerId,
      status: d.status,
      attempts: d.attempts,
      created_at: d.createdAt,
      next_attempt_at: d.nextAttemptAt,
      last_attempt_at: d.lastAttemptAt,
      last_status_code: d.lastStatusCode,
      last_error: d.lastError,
      delivered_at: d.deliveredAt,
      body: d.body,
    },
  };
}

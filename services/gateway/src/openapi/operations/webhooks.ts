import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '@ccs/shared';
import {
  WebhookDeliveryDocument,
  WebhookDeliveryListDocument,
  WebhookEndpointDocument,
  WebhookEndpointListDocument,
} from '../../resources/webhooks.js';
import type { OperationDoc } from '../route-doc.js';
import { NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of the webhook part of the admin API (docs/webhooks.md). */

const ENDPOINT_ID = {
  id: { schema: z.string().min(1).max(200), description: 'A webhook endpoint id.', example: '0b7d6a4e-2f5c-4f1e-9a51-3c2d1e0f9a8b' },
};
const NOT_FOUND = { 404: ["no such webhook endpoint in this app (`webhook_not_found`); another app's endpoints are never found"] };
const EVENTS = WEBHOOK_EVENT_TYPES.map((t) => `\`${t}\``).join(', ');

export const adminListWebhooks: OperationDoc = {
  operationId: 'adminListWebhooks',
  tag: 'Admin',
  summary: "The app's webhook endpoints",
  description:
    'Every webhook endpoint of the app, oldest first, with its event filter and its deliveries by status. The signing secret is never shown again (only its end, `secret_hint`). A read: not recorded in the audit log.',
  token: 'none',
  responses: [{ status: 200, description: 'The endpoints.', schema: WebhookEndpointListDocument, headers: NO_STORE_HEADER }],
  errors: SECRET_KEY_ONLY,
};

export const adminCreateWebhook: OperationDoc = {
  operationId: 'adminCreateWebhook',
  tag: 'Admin',
  summary: 'Add a webhook endpoint',
  description: `Events of the app (${EVENTS}) from now on are POSTed to \`url\`, signed with the secret answered here, once (docs/webhooks.md: body, headers, signature check). \`events\` filters the types (absent or empty: all). At most 20 endpoints per app. Recorded in the audit log.`,
  token: 'none',
  bodyExample: {
    data: { type: 'webhook_endpoint', attributes: { url: 'https://game.example.com/hooks/ccs', events: ['chest.opened'], description: 'analytics' } },
  },
  responses: [{ status: 201, description: 'Created; `secret` is in this answer only.', schema: WebhookEndpointDocument, headers: NO_STORE_HEADER }],
  errors: {
    ...SECRET_KEY_ONLY,
    409: ['the app has 20 endpoints already (`webhook_limit_reached`)'],
    422: [
      'a `url` that is not an absolute http(s) URL without credentials, an unknown event type, or an unknown attribute',
      "a `url` whose host is, or resolves to, a loopback, unspecified, private, link-local (cloud metadata), shared (100.64/10), multicast or reserved address, an IPv4-mapped IPv6 form of one, or an IPv4 address spelled other than in four decimal parts (`webhook_url_forbidden`, `source.pointer` `/data/attributes/url`); only the `host:port` pairs of the operator's WEBHOOK_ALLOW_TARGETS are exempt",
    ],
  },
};

export const adminUpdateWebhook: OperationDoc = {
  operationId: 'adminUpdateWebhook',
  tag: 'Admin',
  summary: 'Change a webhook endpoint',
  description:
    'Changes the given attributes (url, description, events, enabled); `rotate_secret: true` issues a new signing secret, answered once (the old one stops at once). A disabled endpoint gets no new deliveries and its pending ones wait until it is enabled again. Recorded in the audit log.',
  token: 'none',
  params: ENDPOINT_ID,
  bodyExample: { data: { type: 'webhook_endpoint', attributes: { enabled: false } } },
  responses: [{ status: 200, description: 'The endpoint as changed.', schema: WebhookEndpointDocument, headers: NO_STORE_HEADER }],
  errors: {
    ...SECRET_KEY_ONLY,
    ...NOT_FOUND,
    422: ['an invalid attribute, as for POST', 'a forbidden `url`, as for POST (`webhook_url_forbidden`)'],
  },
};

export const adminDeleteWebhook: OperationDoc = {
  operationId: 'adminDeleteWebhook',
  tag: 'Admin',
  summary: 'Remove a webhook endpoint',
  description: 'Removes the endpoint and its deliveries (pending ones are not sent). Recorded in the audit log.',
  token: 'none',
  params: ENDPOINT_ID,
  responses: [{ status: 204, description: 'Removed.' }],
  errors: { ...SECRET_KEY_ONLY, ...NOT_FOUND },
};

export const adminListWebhookDeliveries: OperationDoc = {
  operationId: 'adminListWebhookDeliveries',
  tag: 'Admin',
  summary: "An endpoint's deliveries",
  description:
    "The events sent or to be sent to the endpoint, newest first, with their attempts, the last attempt's status code and error class (never the receiver's answer) and the body sent; `filter[status]=parked` lists those that need a retry. A read: not recorded in the audit log.",
  token: 'none',
  params: ENDPOINT_ID,
  responses: [{ status: 200, description: 'A page of deliveries.', schema: WebhookDeliveryListDocument, headers: NO_STORE_HEADER }],
  errors: { ...SECRET_KEY_ONLY, ...NOT_FOUND, 400: ['`filter[status]` other than pending, delivered or parked (`invalid_filter`)'] },
};

export const adminRetryWebhookDelivery: OperationDoc = {
  operationId: 'adminRetryWebhookDelivery',
  tag: 'Admin',
  summary: 'Send a delivery again',
  description:
    'The delivery is due now with a new 24-hour retry window: a parked one is retried, a pending one is brought forward, a delivered one is sent once more (receivers de-duplicate on the event id). Recorded in the audit log.',
  token: 'none',
  params: {
    ...ENDPOINT_ID,
    delivery_id: {
      schema: z.string().min(1).max(200),
      description: 'A delivery id of that endpoint.',
      example: '5f0c2b1a-7d3e-4c9b-8a6f-1e2d3c4b5a69',
    },
  },
  responses: [{ status: 202, description: 'Due now.', schema: WebhookDeliveryDocument, headers: NO_STORE_HEADER }],
  errors: { ...SECRET_KEY_ONLY, 404: ['no such delivery of that endpoint in this app (`webhook_delivery_not_found`, `webhook_not_found`)'] },
};

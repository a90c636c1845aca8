import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineEvent, defineQuery, defineSubject } from './subject.js';
import { DecimalSchema, UuidSchema } from './context.js';

/**
 * The events a studio's own backend can subscribe to with webhooks (docs/webhooks.md). Each is a
 * fact some service committed; `chest.opened` and `banner.pulled` are read from the grant of the
 * opening (`grants.openings.granted`), `banner.sparked` from the grant of the spark exchange
 * (`grants.sparks.granted`) (GRANT_EVENT_TYPES); the others travel as `DomainEventPublished`,
 * written to the committing service's outbox in the same transaction as the fact.
 */
export const WEBHOOK_EVENT_TYPES = [
  'player.registered',
  'chest.purchased',
  'chest.opened',
  'collection.completed',
  'currency.credited',
  'banner.pulled',
  'banner.sparked',
  'store.purchase_verified',
  'store.refunded',
  'trade.offered',
  'trade.completed',
  'trade.ended',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event types egress derives from the grants of openings and spark exchanges (never published as DomainEventPublished). */
export const GRANT_EVENT_TYPES = ['chest.opened', 'banner.pulled', 'banner.sparked'] as const satisfies readonly WebhookEventType[];
type GrantEventType = (typeof GRANT_EVENT_TYPES)[number];

const Iso = z.string().min(1);

/** One side of a trade in an event's data. */
const TradeSideData = z.object({ collectible_id: z.string(), rarity: z.string() });

/** `data` of each event type, as the webhook body carries it (snake_case, like the HTTP API). */
export const EVENT_DATA = {
  'player.registered': z.object({ player_id: UuidSchema, email: z.string().nullable(), is_anonymous: z.boolean(), registered_at: Iso }),
  'chest.purchased': z.object({
    player_id: UuidSchema,
    inventory_chest_id: UuidSchema,
    chest_type_id: z.string(),
    price: z.object({ currency: z.string(), amount: DecimalSchema }),
    purchased_at: Iso,
  }),
  'chest.opened': z.object({
    player_id: UuidSchema,
    opening_id: UuidSchema,
    chest_type_id: z.string(),
    opened_at: Iso,
    items: z.array(z.object({ slot: z.number().int(), collectible_id: z.string(), collection_id: z.string(), rarity: z.string() })),
  }),
  'collection.completed': z.object({
    player_id: UuidSchema,
    collection_id: z.string(),
    completed_at: Iso,
    reward: z.object({ currencies: z.record(z.string(), z.number()).optional(), chests: z.array(z.string()).optional() }).nullable(),
  }),
  'currency.credited': z.object({
    player_id: UuidSchema,
    currency: z.string(),
    amount: DecimalSchema,
    reason: z.string(),
    reference: z.string().nullable(),
    credited_at: Iso,
  }),
  /** One per opening of a banner pull (docs/design.md §8), besides that opening's `chest.opened`. */
  'banner.pulled': z.object({
    player_id: UuidSchema,
    banner_id: z.string(),
    opening_id: UuidSchema,
    chest_type_id: z.string(),
    /** Whether the opening gave one of the banner's featured collectibles. */
    featured: z.boolean(),
    /** Whether the guarantee held before the opening (its next item of the featured rarity was certain to be featured). */
    guaranteed_before: z.boolean(),
    items: z.array(z.object({ collectible_id: z.string(), rarity: z.string() })),
    opened_at: Iso,
  }),
  /** A spark exchange: spark points taken for one featured collectible (no chest is opened: no `chest.opened`). */
  'banner.sparked': z.object({
    player_id: UuidSchema,
    banner_id: z.string(),
    exchange_id: UuidSchema,
    collectible_id: z.string(),
    exchanged_at: Iso,
  }),
  /** A store purchase verified and granted (docs/store.md), once per store transaction. */
  'store.purchase_verified': z.object({
    player_id: UuidSchema,
    purchase_id: UuidSchema,
    platform: z.enum(['apple', 'google']),
    transaction_id: z.string(),
    product_id: z.string(),
    quantity: z.number().int(),
    price: z.object({ amount: z.string(), currency: z.string() }).nullable(),
    grants: z.object({
      currencies: z.array(z.object({ currency: z.string(), amount: DecimalSchema })),
      chests: z.array(z.object({ id: UuidSchema, chest_type_id: z.string() })),
    }),
    verified_at: Iso,
  }),
  /** A store refund applied (`kind` `refund`: taken back) or reversed (`reversal`: granted again). */
  'store.refunded': z.object({
    player_id: UuidSchema,
    purchase_id: UuidSchema,
    refund_id: UuidSchema,
    platform: z.enum(['apple', 'google']),
    transaction_id: z.string(),
    product_id: z.string(),
    kind: z.enum(['refund', 'reversal']),
    reason: z.string(),
    policy: z.enum(['debt', 'revoke_then_debt']),
    currencies: z.array(z.object({ currency: z.string(), amount: DecimalSchema })),
    chest_ids: z.array(UuidSchema),
    refunded_at: Iso,
  }),
  /** A trade offered (docs/content.md, "Trading"): the offerer's copy of `give` is in escrow. */
  'trade.offered': z.object({
    trade_id: UuidSchema,
    offerer_id: UuidSchema,
    partner_id: UuidSchema,
    give: TradeSideData,
    want: TradeSideData,
    tokens: z.object({ currency: z.string().nullable(), offer: z.number().int(), accept: z.number().int() }),
    expires_at: Iso,
    offered_at: Iso,
  }),
  /** A trade accepted: both copies moved in one step. */
  'trade.completed': z.object({
    trade_id: UuidSchema,
    offerer_id: UuidSchema,
    partner_id: UuidSchema,
    give: TradeSideData,
    want: TradeSideData,
    completed_at: Iso,
  }),
  /** A trade ended without completing (`reason`): the escrowed copy, stamina and tokens went back. */
  'trade.ended': z.object({
    trade_id: UuidSchema,
    offerer_id: UuidSchema,
    partner_id: UuidSchema,
    reason: z.enum(['declined', 'cancelled', 'expired']),
    ended_at: Iso,
  }),
} as const satisfies Record<WebhookEventType, z.ZodType>;

const eventOf = <T extends Exclude<WebhookEventType, GrantEventType>>(type: T) =>
  z.object({ eventId: UuidSchema, type: z.literal(type), appId: UuidSchema, playerId: UuidSchema, occurredAt: Iso, data: EVENT_DATA[type] });

/**
 * A committed fact for webhooks (every type but GRANT_EVENT_TYPES, which the grant carries). Message
 * id = `eventId`, a name-based UUID of the fact (`domainEventId`): a fact re-published after a
 * crash keeps its id, so JetStream and the webhook dispatcher both drop the copy.
 */
export const DomainEventPublished = defineEvent(
  'grants.events',
  z.discriminatedUnion('type', [
    eventOf('player.registered'),
    eventOf('chest.purchased'),
    eventOf('collection.completed'),
    eventOf('currency.credited'),
    eventOf('store.purchase_verified'),
    eventOf('store.refunded'),
    eventOf('trade.offered'),
    eventOf('trade.completed'),
    eventOf('trade.ended'),
  ]),
  // Each service writes the facts it commits; egress fans them out to webhooks.
  { publishers: ['players', 'wallet', 'chests', 'collections', 'store'] },
);
export type DomainEvent = z.infer<typeof DomainEventPublished.payload>;

// Fixed namespace of event ids (a random v4 chosen once for this project).
const EVENT_NAMESPACE = Buffer.from('3c9e5b7a1f2d4e68b0a4d6c8e1f3a5b7', 'hex');

/**
 * The event id of a fact, a name-based UUID (RFC 4122 version 5 layout) of its type and key, e.g.
 * `domainEventId('chest.purchased', inventoryChestId)`: whoever records the fact, whenever, gets
 * the same id. Receivers de-duplicate on it.
 */
export function domainEventId(type: WebhookEventType, key: string): string {
  const hash = createHash('sha1').update(EVENT_NAMESPACE).update(`${type}:${key.toLowerCase()}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// --- Webhook endpoints and deliveries (egress, the webhook egress worker; the admin API and `npm run admin -- webhooks`) ---

/** A webhook endpoint's filter: the event types it receives (empty: every type). */
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

/** Where a studio receives its events: an http(s) URL without credentials, at most 2048 characters. */
export const WebhookUrlSchema = z
  .string()
  .max(2048)
  .refine(
    (s) => {
      try {
        const u = new URL(s);
        return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && u.hostname !== '';
      } catch {
        return false;
      }
    },
    { error: 'url must be an absolute http(s) URL without user or password' },
  );

export const WebhookEndpointViewSchema = z.object({
  id: UuidSchema,
  url: z.string(),
  description: z.string(),
  events: z.array(WebhookEventTypeSchema),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** The secret's last 4 characters (the secret itself is shown once, at creation or rotation). */
  secretHint: z.string(),
  deliveries: z.object({ pending: z.number().int().min(0), delivered: z.number().int().min(0), parked: z.number().int().min(0) }),
});
export type WebhookEndpointView = z.infer<typeof WebhookEndpointViewSchema>;

const WebhookChanges = z.object({
  url: WebhookUrlSchema.optional(),
  description: z.string().max(500).optional(),
  events: z.array(WebhookEventTypeSchema).max(WEBHOOK_EVENT_TYPES.length).optional(),
  enabled: z.boolean().optional(),
});

/** The app's webhook endpoints, oldest first (at most 20 per app). */
export const AdminListWebhooks = defineQuery(
  'egress.v1.admin_list_webhooks',
  z.object({ appId: UuidSchema }),
  z.object({ endpoints: z.array(WebhookEndpointViewSchema) }),
  { callers: ['gateway', 'admin'] },
);

/** Most endpoints an app may have. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

/** A new endpoint and its signing secret (`whsec_…`), in clear only in this answer. 409 webhook_limit_reached past 20. */
export const AdminCreateWebhook = defineSubject(
  'egress.v1.admin_create_webhook',
  WebhookChanges.extend({ appId: UuidSchema, url: WebhookUrlSchema }),
  z.object({ endpoint: WebhookEndpointViewSchema, secret: z.string() }),
  { callers: ['gateway', 'admin'] },
);

/** Changes an endpoint of the app (404 webhook_not_found otherwise); `rotateSecret` issues a new secret, answered once. */
export const AdminUpdateWebhook = defineSubject(
  'egress.v1.admin_update_webhook',
  WebhookChanges.extend({ appId: UuidSchema, endpointId: UuidSchema, rotateSecret: z.boolean().optional() }),
  z.object({ endpoint: WebhookEndpointViewSchema, secret: z.string().optional() }),
  { callers: ['gateway', 'admin'] },
);

/** Removes an endpoint of the app and its deliveries (404 webhook_not_found otherwise). */
export const AdminDeleteWebhook = defineSubject(
  'egress.v1.admin_delete_webhook',
  z.object({ appId: UuidSchema, endpointId: UuidSchema }),
  z.object({}),
  { callers: ['gateway', 'admin'] },
);

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'parked'] as const;

export const WebhookDeliveryViewSchema = z.object({
  id: UuidSchema,
  endpointId: UuidSchema,
  eventId: UuidSchema,
  eventType: WebhookEventTypeSchema,
  playerId: UuidSchema.nullable(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempts: z.number().int().min(0),
  createdAt: z.string(),
  nextAttemptAt: z.string().nullable(),
  lastAttemptAt: z.string().nullable(),
  lastStatusCode: z.number().int().nullable(),
  /** The last failed attempt's error class: timeout, refused, tls, destination_forbidden or http_<status>; never the answer's text. */
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  /** The body as sent (JSON text). */
  body: z.string(),
});
export type WebhookDeliveryView = z.infer<typeof WebhookDeliveryViewSchema>;

/** An endpoint's deliveries, newest first, optionally of one status (404 webhook_not_found for another app's endpoint). */
export const AdminListWebhookDeliveries = defineQuery(
  'egress.v1.admin_list_webhook_deliveries',
  z.object({
    appId: UuidSchema,
    endpointId: UuidSchema,
    status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
    page: z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) }),
  }),
  z.object({ deliveries: z.array(WebhookDeliveryViewSchema), total: z.number().int().min(0) }),
  { callers: ['gateway', 'admin'] },
);

/**
 * Sends a delivery again now: a parked one gets a new 24 h retry window; a pending one is moved
 * to now; a delivered one is sent once more (receivers de-duplicate on the event id). 404
 * webhook_delivery_not_found when the endpoint or delivery is not the app's.
 */
export const AdminRetryWebhookDelivery = defineSubject(
  'egress.v1.admin_retry_webhook_delivery',
  z.object({ appId: UuidSchema, endpointId: UuidSchema, deliveryId: UuidSchema }),
  z.object({ delivery: WebhookDeliveryViewSchema }),
  { callers: ['gateway', 'admin'] },
);

/**
 * The event types some enabled endpoint of the app receives (internal): a producer of a frequent
 * event (the wallet's currency.credited) writes it only when someone listens, so an app without
 * webhooks pays nothing for them. Cached by the producer; WebhooksChanged clears its entry.
 */
export const WebhookInterest = defineQuery(
  'egress.v1.webhook_interest',
  z.object({ appId: UuidSchema }),
  z.object({ types: z.array(WebhookEventTypeSchema) }),
  { callers: ['wallet', 'store'] },
);

/** Core-NATS notice from egress: an app's webhook endpoints changed (created, changed, removed). */
export const WebhooksChanged = defineEvent('events.apps.webhooks_changed', z.object({ appId: UuidSchema }), {
  publishers: ['egress'],
  // wallet writes currency.credited, and the store its store.* events, only for apps that take them;
  // egress skips grants of apps without endpoints.
  listeners: ['wallet', 'egress', 'store'],
});

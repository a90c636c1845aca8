import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineEvent } from './subject.js';
import { DecimalSchema, UuidSchema } from './context.js';

/**
 * The events a studio's own backend can subscribe to with webhooks (docs/webhooks.md). Each is a
 * fact some service committed; `chest.opened` is read from the opening's grant
 * (`grants.openings.granted`), the others travel as `DomainEventPublished`, written to the
 * committing service's outbox in the same transaction as the fact.
 */
export const WEBHOOK_EVENT_TYPES = ['player.registered', 'chest.purchased', 'chest.opened', 'collection.completed', 'currency.credited'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const Iso = z.string().min(1);

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
} as const satisfies Record<WebhookEventType, z.ZodType>;

const eventOf = <T extends Exclude<WebhookEventType, 'chest.opened'>>(type: T) =>
  z.object({ eventId: UuidSchema, type: z.literal(type), appId: UuidSchema, playerId: UuidSchema, occurredAt: Iso, data: EVENT_DATA[type] });

/**
 * A committed fact for webhooks (every type but `chest.opened`, which its grant carries). Message
 * id = `eventId`, a name-based UUID of the fact (`domainEventId`): a fact re-published after a
 * crash keeps its id, so JetStream and the webhook dispatcher both drop the copy.
 */
export const DomainEventPublished = defineEvent(
  'grants.events',
  z.discriminatedUnion('type', [eventOf('player.registered'), eventOf('chest.purchased'), eventOf('collection.completed'), eventOf('currency.credited')]),
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

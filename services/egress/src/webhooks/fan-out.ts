import {
  consumer,
  domainEventId,
  DomainEventPublished,
  DURABLE,
  OpeningGranted,
  type Delivery,
  type DomainEvent,
  type Queryable,
  type WebhookEventType,
} from '@ccs/shared';
import type { z } from 'zod';
import { storeEventsWithDeliveries, type WebhookEvent } from '../repositories/webhook-events-repo.js';

export type { WebhookEvent };

/** The body of a webhook request: `{id, type, created_at, app_id, data}` (docs/webhooks.md). */
function bodyOf(id: string, type: WebhookEventType, appId: string, occurredAt: string, data: unknown): string {
  return JSON.stringify({ id, type, created_at: occurredAt, app_id: appId, data });
}

export function fromDomainEvent(e: DomainEvent): WebhookEvent {
  return {
    id: e.eventId,
    appId: e.appId,
    type: e.type,
    playerId: e.playerId,
    occurredAt: e.occurredAt,
    body: bodyOf(e.eventId, e.type, e.appId, e.occurredAt, e.data),
  };
}

/** chest.opened, from the opening's grant (event id: a name-based UUID of the opening). */
export function fromOpening(g: z.infer<typeof OpeningGranted.payload>): WebhookEvent {
  const id = domainEventId('chest.opened', g.openingId);
  const data = {
    player_id: g.playerId,
    opening_id: g.openingId,
    chest_type_id: g.chestTypeId,
    opened_at: g.openedAt,
    items: g.items.map((it) => ({ slot: it.slot, collectible_id: it.collectibleId, collection_id: it.collectionId, rarity: it.rarity })),
  };
  return {
    id,
    appId: g.appId,
    type: 'chest.opened',
    playerId: g.playerId,
    occurredAt: g.openedAt,
    body: bodyOf(id, 'chest.opened', g.appId, g.openedAt, data),
  };
}

/** De-duplicates a batch by event id (a message and its re-publish may be pulled together). */
function unique(events: WebhookEvent[]): WebhookEvent[] {
  return [...new Map(events.map((e) => [e.id, e])).values()];
}

/**
 * The two consumers that turn the stream into deliveries: domain events (grants.events) and
 * chest openings (their grants). `wake` is told when a batch created deliveries, so this
 * replica's sender sends them at once rather than at its next poll.
 */
export function webhookConsumers(wake: () => void) {
  const apply = async (db: Queryable, events: WebhookEvent[]) => {
    const stored = await storeEventsWithDeliveries(db, unique(events));
    if (stored.size) wake();
    return stored;
  };
  return [
    consumer({
      durable: DURABLE.webhookEvents,
      event: DomainEventPublished,
      processedId: (e) => e.eventId,
      applyIdempotent: (db, batch: Delivery<DomainEvent>[]) =>
        apply(
          db,
          batch.map((d) => fromDomainEvent(d.payload)),
        ),
    }),
    consumer({
      durable: DURABLE.webhookOpenings,
      event: OpeningGranted,
      processedId: (g) => domainEventId('chest.opened', g.openingId),
      applyIdempotent: (db, batch) =>
        apply(
          db,
          batch.map((d) => fromOpening(d.payload)),
        ),
    }),
  ];
}

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

/** An event as the webhooks send it: its row, and the body every endpoint receives. */
export interface WebhookEvent {
  id: string;
  appId: string;
  type: WebhookEventType;
  playerId: string | null;
  occurredAt: string;
  body: string;
}

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

/**
 * ONE statement: stores the events that at least one enabled endpoint of their app wants (its
 * filter empty or naming the type) and creates a delivery per such endpoint and event. Keyed by
 * event id and (endpoint, event): a re-delivered message adds nothing. An app without endpoints
 * costs one indexed lookup per batch and stores nothing. Returns the ids of the events stored.
 */
export async function fanOut(db: Queryable, events: WebhookEvent[]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const r = await db.query<{ id: string }>(
    `WITH ev AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::timestamptz[], $6::text[])
         AS t(id, app_id, type, player_id, occurred_at, body)
     ),
     targets AS (
       SELECT e.id AS endpoint_id, ev.id AS event_id
         FROM ev JOIN webhook_endpoints e ON e.app_id = ev.app_id
        WHERE e.enabled AND (cardinality(e.events) = 0 OR ev.type = ANY (e.events))
     ),
     stored AS (
       INSERT INTO webhook_events (id, app_id, type, player_id, occurred_at, body)
       SELECT ev.id, ev.app_id, ev.type, ev.player_id, ev.occurred_at, ev.body FROM ev
        WHERE EXISTS (SELECT 1 FROM targets t WHERE t.event_id = ev.id)
       ON CONFLICT (id) DO NOTHING
       RETURNING id
     ),
     created AS (
       INSERT INTO webhook_deliveries (endpoint_id, event_id)
       SELECT t.endpoint_id, t.event_id FROM targets t JOIN stored s ON s.id = t.event_id
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
     )
     SELECT id FROM stored`,
    [
      events.map((e) => e.id),
      events.map((e) => e.appId),
      events.map((e) => e.type),
      events.map((e) => e.playerId),
      events.map((e) => e.occurredAt),
      events.map((e) => e.body),
    ],
  );
  return new Set(r.rows.map((row) => row.id));
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
    const stored = await fanOut(db, unique(events));
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

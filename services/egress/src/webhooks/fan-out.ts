import {
  consumer,
  domainEventId,
  DomainEventPublished,
  DURABLE,
  GRANT_EVENT_TYPES,
  OpeningGranted,
  WEBHOOK_EVENT_TYPES,
  type CallContext,
  type Delivery,
  type DomainEvent,
  type Queryable,
  type WebhookEventType,
  type WebhookInterestCache,
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

type Grant = z.infer<typeof OpeningGranted.payload>;

function event(type: WebhookEventType, key: string, g: Grant, data: unknown): WebhookEvent {
  const id = domainEventId(type, key);
  return { id, appId: g.appId, type, playerId: g.playerId, occurredAt: g.openedAt, body: bodyOf(id, type, g.appId, g.openedAt, data) };
}

/**
 * The webhook events of one grant (event ids: name-based UUIDs of the type and the opening or
 * exchange id, so a re-delivered grant gives the same events):
 * - a chest's opening: `chest.opened`, and with it `banner.pulled` when a banner pull made it;
 * - a banner's spark exchange (`source: 'spark'`): `banner.sparked` only, as no chest was opened.
 */
export function fromGrant(g: Grant): WebhookEvent[] {
  if (g.source === 'spark') {
    const item = g.items[0]!;
    return [
      event('banner.sparked', g.openingId, g, {
        player_id: g.playerId,
        banner_id: g.bannerId,
        exchange_id: g.openingId,
        collectible_id: item.collectibleId,
        exchanged_at: g.openedAt,
      }),
    ];
  }
  const opened = event('chest.opened', g.openingId, g, {
    player_id: g.playerId,
    opening_id: g.openingId,
    chest_type_id: g.chestTypeId,
    opened_at: g.openedAt,
    items: g.items.map((it) => ({ slot: it.slot, collectible_id: it.collectibleId, collection_id: it.collectionId, rarity: it.rarity })),
  });
  // A banner pull's opening; a grant published before the grant carried `banner` has no banner.pulled.
  if (!g.bannerId || !g.banner) return [opened];
  const pulled = event('banner.pulled', g.openingId, g, {
    player_id: g.playerId,
    banner_id: g.bannerId,
    opening_id: g.openingId,
    chest_type_id: g.chestTypeId,
    featured: g.banner.featured,
    guaranteed_before: g.banner.guaranteedBefore,
    items: g.items.map((it) => ({ collectible_id: it.collectibleId, rarity: it.rarity })),
    opened_at: g.openedAt,
  });
  return [opened, pulled];
}

/** De-duplicates a batch by event id (a message and its re-publish may be pulled together). */
function unique(events: WebhookEvent[]): WebhookEvent[] {
  return [...new Map(events.map((e) => [e.id, e])).values()];
}

/**
 * The two consumers that turn the stream into deliveries: domain events (grants.events), one
 * event each, and the grants of openings and spark exchanges (grants.openings.granted), one or
 * two events each (fromGrant). `wake` is told when a batch created deliveries, so this
 * replica's sender sends them at once rather than at its next poll.
 */
export function webhookConsumers(wake: () => void, interest?: WebhookInterestCache) {
  // An app whose endpoints take none of a consumer's events: its messages are acked unread
  // (ConsumerDef.skip), which spares their decoding and a statement per batch (docs/performance.md).
  const skipUnless = (types: readonly WebhookEventType[]) =>
    interest && ((ctx: CallContext) => (ctx.appId ? interest.wantsAny(ctx.appId, types, ctx.requestId).then((wanted) => !wanted) : false));
  const apply = async (db: Queryable, events: WebhookEvent[]) => {
    const stored = await storeEventsWithDeliveries(db, unique(events));
    if (stored.size) wake();
    return stored;
  };
  return [
    consumer({
      durable: DURABLE.webhookEvents,
      event: DomainEventPublished,
      skip: skipUnless(WEBHOOK_EVENT_TYPES),
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
      skip: skipUnless(GRANT_EVENT_TYPES),
      // One grant, one or two events: the grant counts as applied when one of its events was stored.
      processedId: (g) => g.openingId,
      applyIdempotent: async (db, batch) => {
        const grantOfEvent = new Map<string, string>();
        const events: WebhookEvent[] = [];
        for (const { payload } of batch) {
          for (const e of fromGrant(payload)) {
            grantOfEvent.set(e.id, payload.openingId);
            events.push(e);
          }
        }
        const stored = await apply(db, events);
        return new Set([...stored].map((id) => grantOfEvent.get(id)!));
      },
    }),
  ];
}

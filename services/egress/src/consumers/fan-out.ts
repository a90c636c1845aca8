import {
  consumer,
  domainEventId,
  DomainEventPublished,
  DURABLE,
  OpeningGranted,
  SparkGranted,
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
/** What `banner.sparked` tells of a spark exchange. */
type Spark = Pick<z.infer<typeof SparkGranted.payload>, 'exchangeId' | 'appId' | 'playerId' | 'bannerId' | 'collectibleId' | 'exchangedAt'>;

/** A grant's event of `type`, its id a name-based UUID of the type and `key` (a re-delivered grant gives the same event). */
function event(type: WebhookEventType, key: string, g: { appId: string; playerId: string }, occurredAt: string, data: unknown): WebhookEvent {
  const id = domainEventId(type, key);
  return { id, appId: g.appId, type, playerId: g.playerId, occurredAt, body: bodyOf(id, type, g.appId, occurredAt, data) };
}

/** The event of a banner's spark exchange: `banner.sparked` (no chest was opened: no `chest.opened`), keyed by the exchange id. */
export function fromSpark(s: Spark): WebhookEvent {
  return event('banner.sparked', s.exchangeId, s, s.exchangedAt, {
    player_id: s.playerId,
    banner_id: s.bannerId,
    exchange_id: s.exchangeId,
    collectible_id: s.collectibleId,
    exchanged_at: s.exchangedAt,
  });
}

/**
 * A spark exchange granted as an opening (`source: 'spark'`, by the versions before SparkGranted,
 * still in the stream or an outbox): the exchange it was, so it gives the same `banner.sparked`
 * (same id and body) as the exchange's SparkGranted would.
 */
export function fromLegacySparkGrant(g: Grant): Spark {
  return {
    exchangeId: g.openingId,
    appId: g.appId,
    playerId: g.playerId,
    // Always set on a spark grant.
    bannerId: g.bannerId ?? '',
    collectibleId: g.items[0]!.collectibleId,
    exchangedAt: g.openedAt,
  };
}

/**
 * The webhook events of one opening's grant (event ids: name-based UUIDs of the type and the
 * opening id, so a re-delivered grant gives the same events): `chest.opened`, and with it
 * `banner.pulled` when a banner pull made it. A legacy spark grant gives its `banner.sparked` only.
 */
export function fromGrant(g: Grant): WebhookEvent[] {
  if (g.source === 'spark') return [fromSpark(fromLegacySparkGrant(g))];
  const opened = event('chest.opened', g.openingId, g, g.openedAt, {
    player_id: g.playerId,
    opening_id: g.openingId,
    chest_type_id: g.chestTypeId,
    opened_at: g.openedAt,
    items: g.items.map((it) => ({ slot: it.slot, collectible_id: it.collectibleId, collection_id: it.collectionId, rarity: it.rarity })),
  });
  // A banner pull's opening; a grant published before the grant carried `banner` has no banner.pulled.
  if (!g.bannerId || !g.banner) return [opened];
  const pulled = event('banner.pulled', g.openingId, g, g.openedAt, {
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

/** The events an opening's grant gives (fromGrant; `banner.sparked`: a legacy spark grant). */
const OPENING_EVENT_TYPES = ['chest.opened', 'banner.pulled', 'banner.sparked'] as const satisfies readonly WebhookEventType[];

/**
 * The three consumers that turn the stream into deliveries: domain events (grants.events), one
 * event each; the grants of openings (grants.openings.granted), one or two events each
 * (fromGrant); the grants of spark exchanges (grants.sparks.granted), one `banner.sparked` each.
 * `wake` is told when a batch created deliveries, so this replica's sender sends them at once
 * rather than at its next poll.
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
      skip: skipUnless(OPENING_EVENT_TYPES),
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
    consumer({
      durable: DURABLE.webhookSparks,
      event: SparkGranted,
      skip: skipUnless(['banner.sparked']),
      // One exchange, one event: keyed by the exchange id, the event by it too.
      processedId: (s) => s.exchangeId,
      applyIdempotent: async (db, batch) => {
        const exchangeOfEvent = new Map(batch.map(({ payload }) => [fromSpark(payload).id, payload.exchangeId]));
        const stored = await apply(
          db,
          batch.map((d) => fromSpark(d.payload)),
        );
        return new Set([...stored].map((id) => exchangeOfEvent.get(id)!));
      },
    }),
  ];
}

import { preparedStatement, type Queryable, type WebhookEventType } from '@ccs/shared';

/** An event as the webhooks send it: its row, and the body every endpoint receives. */
export interface WebhookEvent {
  id: string;
  appId: string;
  type: WebhookEventType;
  playerId: string | null;
  occurredAt: string;
  body: string;
}

const STORE_EVENTS = preparedStatement(
  'egress_store_events',
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
);

/**
 * ONE statement: stores the events that at least one enabled endpoint of their app wants (its
 * filter empty or naming the type) and creates a delivery per such endpoint and event. Keyed by
 * event id and (endpoint, event): a re-delivered message adds nothing. An app without endpoints
 * costs one indexed lookup per batch and stores nothing. Returns the ids of the events stored.
 */
export async function storeEventsWithDeliveries(db: Queryable, events: WebhookEvent[]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const r = await db.query<{ id: string }>(
    STORE_EVENTS.with([
      events.map((e) => e.id),
      events.map((e) => e.appId),
      events.map((e) => e.type),
      events.map((e) => e.playerId),
      events.map((e) => e.occurredAt),
      events.map((e) => e.body),
    ]),
  );
  return new Set(r.rows.map((row) => row.id));
}

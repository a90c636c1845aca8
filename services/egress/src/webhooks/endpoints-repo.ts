import { randomBytes, randomUUID } from 'node:crypto';
import {
  AppError,
  MAX_WEBHOOK_ENDPOINTS,
  withTransaction,
  type Pool,
  type Queryable,
  type WebhookDeliveryView,
  type WebhookEndpointView,
  type WebhookEventType,
} from '@ccs/shared';

/** A new signing secret: `whsec_` and 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

interface EndpointRow {
  id: string;
  url: string;
  description: string;
  events: WebhookEventType[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
  secret: string;
  pending: number;
  delivered: number;
  parked: number;
}

const ENDPOINT_SELECT = `
  SELECT e.id, e.url, e.description, e.events, e.enabled, e.created_at, e.updated_at, e.secret,
         count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
         count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE d.status = 'parked')::int AS parked
    FROM webhook_endpoints e LEFT JOIN webhook_deliveries d ON d.endpoint_id = e.id`;

const endpointView = (r: EndpointRow): WebhookEndpointView => ({
  id: r.id,
  url: r.url,
  description: r.description,
  events: r.events,
  enabled: r.enabled,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  secretHint: `whsec_…${r.secret.slice(-4)}`,
  deliveries: { pending: r.pending, delivered: r.delivered, parked: r.parked },
});

const notFound = () => AppError.notFound('webhook_not_found', 'No such webhook endpoint in this app.', { parameter: 'id' });

export async function listEndpoints(db: Queryable, appId: string): Promise<WebhookEndpointView[]> {
  const r = await db.query<EndpointRow>(`${ENDPOINT_SELECT} WHERE e.app_id = $1 GROUP BY e.id ORDER BY e.created_at, e.id`, [appId]);
  return r.rows.map(endpointView);
}

export async function getEndpoint(db: Queryable, appId: string, endpointId: string): Promise<WebhookEndpointView> {
  const r = await db.query<EndpointRow>(`${ENDPOINT_SELECT} WHERE e.app_id = $1 AND e.id = $2 GROUP BY e.id`, [appId, endpointId]);
  if (!r.rows[0]) throw notFound();
  return endpointView(r.rows[0]);
}

export interface EndpointChanges {
  url?: string;
  description?: string;
  events?: WebhookEventType[];
  enabled?: boolean;
}

/** Distinct event types in the canonical order (a filter naming one twice is the same filter). */
const canonical = (events: WebhookEventType[] | undefined) => (events ? [...new Set(events)].sort() : undefined);

/** Creates an endpoint (at most MAX_WEBHOOK_ENDPOINTS per app, under the app's advisory lock). */
export async function createEndpoint(
  pool: Pool,
  appId: string,
  c: EndpointChanges & { url: string },
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  const secret = newWebhookSecret();
  const id = randomUUID();
  await withTransaction(pool, async (tx) => {
    // The app exists: the gateway resolved it from its key (the egress worker keeps no apps).
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('egress.webhooks:' || $1))", [appId]);
    const n = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE app_id = $1', [appId]);
    if (n.rows[0]!.n >= MAX_WEBHOOK_ENDPOINTS)
      throw AppError.conflict('webhook_limit_reached', `An app has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; remove one first.`);
    await tx.query('INSERT INTO webhook_endpoints (id, app_id, url, description, events, enabled, secret) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      id,
      appId,
      c.url,
      c.description ?? '',
      canonical(c.events) ?? [],
      c.enabled ?? true,
      secret,
    ]);
  });
  return { endpoint: await getEndpoint(pool, appId, id), secret };
}

/** Changes an endpoint of the app; a new secret when asked (answered once). */
export async function updateEndpoint(
  pool: Pool,
  appId: string,
  endpointId: string,
  c: EndpointChanges & { rotateSecret?: boolean },
): Promise<{ endpoint: WebhookEndpointView; secret?: string }> {
  const secret = c.rotateSecret ? newWebhookSecret() : undefined;
  const r = await pool.query(
    `UPDATE webhook_endpoints
        SET url = coalesce($3, url), description = coalesce($4, description), events = coalesce($5, events),
            enabled = coalesce($6, enabled), secret = coalesce($7, secret), updated_at = now()
      WHERE app_id = $1 AND id = $2`,
    [appId, endpointId, c.url ?? null, c.description ?? null, canonical(c.events) ?? null, c.enabled ?? null, secret ?? null],
  );
  if (r.rowCount === 0) throw notFound();
  return { endpoint: await getEndpoint(pool, appId, endpointId), ...(secret ? { secret } : {}) };
}

export async function deleteEndpoint(pool: Pool, appId: string, endpointId: string): Promise<void> {
  const r = await pool.query('DELETE FROM webhook_endpoints WHERE app_id = $1 AND id = $2', [appId, endpointId]);
  if (r.rowCount === 0) throw notFound();
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: WebhookEventType;
  player_id: string | null;
  status: 'pending' | 'delivered' | 'parked';
  attempts: number;
  created_at: Date;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  body: string;
}

const DELIVERY_SELECT = `
  SELECT d.id, d.endpoint_id, d.event_id, ev.type AS event_type, ev.player_id, d.status, d.attempts, d.created_at,
         d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.delivered_at, ev.body
    FROM webhook_deliveries d
    JOIN webhook_events ev ON ev.id = d.event_id
    JOIN webhook_endpoints e ON e.id = d.endpoint_id`;

const deliveryView = (r: DeliveryRow): WebhookDeliveryView => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  playerId: r.player_id,
  status: r.status,
  attempts: r.attempts,
  createdAt: r.created_at.toISOString(),
  nextAttemptAt: r.status === 'pending' ? r.next_attempt_at.toISOString() : null,
  lastAttemptAt: r.last_attempt_at?.toISOString() ?? null,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  deliveredAt: r.delivered_at?.toISOString() ?? null,
  body: r.body,
});

/** An endpoint's deliveries, newest first (404 when the endpoint is not the app's). */
export async function listDeliveries(
  pool: Pool,
  q: { appId: string; endpointId: string; status?: string; page: { limit: number; offset: number } },
): Promise<{ deliveries: WebhookDeliveryView[]; total: number }> {
  const owned = await pool.query('SELECT 1 FROM webhook_endpoints WHERE app_id = $1 AND id = $2', [q.appId, q.endpointId]);
  if (owned.rowCount === 0) throw notFound();
  const where = 'WHERE e.app_id = $1 AND d.endpoint_id = $2 AND ($3::text IS NULL OR d.status = $3)';
  const args = [q.appId, q.endpointId, q.status ?? null];
  const [rows, count] = await Promise.all([
    pool.query<DeliveryRow>(`${DELIVERY_SELECT} ${where} ORDER BY d.created_at DESC, d.id LIMIT $4 OFFSET $5`, [
      ...args,
      q.page.limit,
      q.page.offset,
    ]),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id ${where}`, args),
  ]);
  return { deliveries: rows.rows.map(deliveryView), total: count.rows[0]!.n };
}

/**
 * Due now, with a new retry window: a parked or delivered delivery is sent again, a pending one
 * is brought forward. 404 when the endpoint or the delivery is not the app's.
 */
export async function retryDelivery(pool: Pool, appId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryView> {
  const r = await pool.query(
    `UPDATE webhook_deliveries d
        SET status = 'pending', next_attempt_at = now(), window_start = now(), claimed_until = NULL
       FROM webhook_endpoints e
      WHERE d.id = $3 AND d.endpoint_id = $2 AND e.id = d.endpoint_id AND e.app_id = $1`,
    [appId, endpointId, deliveryId],
  );
  if (r.rowCount === 0)
    throw AppError.notFound('webhook_delivery_not_found', 'No such delivery of this webhook endpoint.', { parameter: 'delivery_id' });
  const row = await pool.query<DeliveryRow>(`${DELIVERY_SELECT} WHERE d.id = $1`, [deliveryId]);
  return deliveryView(row.rows[0]!);
}

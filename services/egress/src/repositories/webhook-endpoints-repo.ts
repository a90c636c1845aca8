import { randomBytes, randomUUID } from 'node:crypto';
import {
  MAX_WEBHOOK_ENDPOINTS,
  WEBHOOK_EVENT_TYPES,
  withTransaction,
  type Pool,
  type Queryable,
  type WebhookEndpointView,
  type WebhookEventType,
} from '@ccs/shared';
import { endpointNotFound, webhookLimitReached } from '../errors.js';

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

/** The app's endpoints with their delivery counts, oldest first. */
export async function listEndpoints(db: Queryable, appId: string): Promise<WebhookEndpointView[]> {
  const r = await db.query<EndpointRow>(`${ENDPOINT_SELECT} WHERE e.app_id = $1 GROUP BY e.id ORDER BY e.created_at, e.id`, [appId]);
  return r.rows.map(endpointView);
}

/** One endpoint of the app (404 when it is not the app's). */
export async function getEndpoint(db: Queryable, appId: string, endpointId: string): Promise<WebhookEndpointView> {
  const r = await db.query<EndpointRow>(`${ENDPOINT_SELECT} WHERE e.app_id = $1 AND e.id = $2 GROUP BY e.id`, [appId, endpointId]);
  if (!r.rows[0]) throw endpointNotFound();
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
    if (n.rows[0]!.n >= MAX_WEBHOOK_ENDPOINTS) throw webhookLimitReached();
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
  if (r.rowCount === 0) throw endpointNotFound();
  return { endpoint: await getEndpoint(pool, appId, endpointId), ...(secret ? { secret } : {}) };
}

/** Removes an endpoint of the app, with its deliveries (404 when it is not the app's). */
export async function deleteEndpoint(pool: Pool, appId: string, endpointId: string): Promise<void> {
  const r = await pool.query('DELETE FROM webhook_endpoints WHERE app_id = $1 AND id = $2', [appId, endpointId]);
  if (r.rowCount === 0) throw endpointNotFound();
}

/** Whether the app has an endpoint with this id. */
export async function endpointExists(db: Queryable, appId: string, endpointId: string): Promise<boolean> {
  const r = await db.query('SELECT 1 FROM webhook_endpoints WHERE app_id = $1 AND id = $2', [appId, endpointId]);
  return (r.rowCount ?? 0) > 0;
}

/** The event filters of the app's enabled endpoints (an empty filter takes every type). */
export async function enabledEventFilters(db: Queryable, appId: string): Promise<WebhookEventType[][]> {
  const r = await db.query<{ events: WebhookEventType[] }>('SELECT events FROM webhook_endpoints WHERE app_id = $1 AND enabled', [appId]);
  return r.rows.map((e) => e.events);
}

/** The event types an app's enabled endpoints take (an empty filter takes every type). */
export async function enabledEventTypes(db: Queryable, appId: string): Promise<WebhookEventType[]> {
  const filters = await enabledEventFilters(db, appId);
  return filters.some((events) => events.length === 0) ? [...WEBHOOK_EVENT_TYPES] : [...new Set(filters.flat())];
}

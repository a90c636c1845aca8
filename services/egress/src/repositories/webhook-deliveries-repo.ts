import { type Pool, type WebhookDeliveryView, type WebhookEventType } from '@ccs/shared';
import { deliveryNotFound, endpointNotFound } from '../errors.js';
import { endpointExists } from './webhook-endpoints-repo.js';

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
  if (!(await endpointExists(pool, q.appId, q.endpointId))) throw endpointNotFound();
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
  if (r.rowCount === 0) throw deliveryNotFound();
  const row = await pool.query<DeliveryRow>(`${DELIVERY_SELECT} WHERE e.app_id = $1 AND d.endpoint_id = $2 AND d.id = $3`, [
    appId,
    endpointId,
    deliveryId,
  ]);
  return deliveryView(row.rows[0]!);
}

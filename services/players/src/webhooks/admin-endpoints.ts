import {
  AdminCreateWebhook,
  AdminDeleteWebhook,
  AdminListWebhookDeliveries,
  AdminListWebhooks,
  AdminRetryWebhookDelivery,
  AdminUpdateWebhook,
  encodeJson,
  endpoint,
  prefixed,
  WEBHOOK_EVENT_TYPES,
  WebhookInterest,
  WebhooksChanged,
  type Pool,
} from '@ccs/shared';
import type { NatsConnection } from 'nats';
import { createEndpoint, deleteEndpoint, listDeliveries, listEndpoints, retryDelivery, updateEndpoint } from './endpoints-repo.js';

/**
 * The webhook subjects of the admin API and `npm run admin -- webhooks`: endpoints and their
 * deliveries, always of the request's app (another app's ids are not found). `wake` tells this
 * replica's sender that a retried delivery is due.
 */
export function webhookAdminEndpoints(pool: Pool, wake: () => void, nc: NatsConnection, prefix: string) {
  // Producers that write an event only when someone listens (the wallet) forget their cached answer.
  const changed = (appId: string) => nc.publish(prefixed(prefix, WebhooksChanged.subject), encodeJson(WebhooksChanged.payload.parse({ appId })));
  return [
    endpoint(AdminListWebhooks, async ({ appId }) => ({ endpoints: await listEndpoints(pool, appId) })),
    endpoint(AdminCreateWebhook, async ({ appId, ...c }) => {
      const made = await createEndpoint(pool, appId, c);
      changed(appId);
      return made;
    }),
    endpoint(AdminUpdateWebhook, async ({ appId, endpointId, ...c }) => {
      const made = await updateEndpoint(pool, appId, endpointId, c);
      changed(appId);
      return made;
    }),
    endpoint(AdminDeleteWebhook, async ({ appId, endpointId }) => {
      await deleteEndpoint(pool, appId, endpointId);
      changed(appId);
      return {};
    }),
    endpoint(WebhookInterest, async ({ appId }) => {
      const r = await pool.query<{ events: string[] }>('SELECT events FROM webhook_endpoints WHERE app_id = $1 AND enabled', [appId]);
      const types = r.rows.some((e) => e.events.length === 0) ? [...WEBHOOK_EVENT_TYPES] : [...new Set(r.rows.flatMap((e) => e.events))];
      return { types: types as (typeof WEBHOOK_EVENT_TYPES)[number][] };
    }),
    endpoint(AdminListWebhookDeliveries, async (q) => listDeliveries(pool, q)),
    endpoint(AdminRetryWebhookDelivery, async ({ appId, endpointId, deliveryId }) => {
      const delivery = await retryDelivery(pool, appId, endpointId, deliveryId);
      wake();
      return { delivery };
    }),
  ];
}

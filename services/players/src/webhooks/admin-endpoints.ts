import {
  AdminCreateWebhook,
  AdminDeleteWebhook,
  AdminListWebhookDeliveries,
  AdminListWebhooks,
  AdminRetryWebhookDelivery,
  AdminUpdateWebhook,
  endpoint,
  type Pool,
} from '@ccs/shared';
import { createEndpoint, deleteEndpoint, listDeliveries, listEndpoints, retryDelivery, updateEndpoint } from './endpoints-repo.js';

/**
 * The webhook subjects of the admin API and `npm run admin -- webhooks`: endpoints and their
 * deliveries, always of the request's app (another app's ids are not found). `wake` tells this
 * replica's sender that a retried delivery is due.
 */
export function webhookAdminEndpoints(pool: Pool, wake: () => void) {
  return [
    endpoint(AdminListWebhooks, async ({ appId }) => ({ endpoints: await listEndpoints(pool, appId) })),
    endpoint(AdminCreateWebhook, async ({ appId, ...c }) => createEndpoint(pool, appId, c)),
    endpoint(AdminUpdateWebhook, async ({ appId, endpointId, ...c }) => updateEndpoint(pool, appId, endpointId, c)),
    endpoint(AdminDeleteWebhook, async ({ appId, endpointId }) => {
      await deleteEndpoint(pool, appId, endpointId);
      return {};
    }),
    endpoint(AdminListWebhookDeliveries, async (q) => listDeliveries(pool, q)),
    endpoint(AdminRetryWebhookDelivery, async ({ appId, endpointId, deliveryId }) => {
      const delivery = await retryDelivery(pool, appId, endpointId, deliveryId);
      wake();
      return { delivery };
    }),
  ];
}

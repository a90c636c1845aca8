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
  WebhookInterest,
  WebhooksChanged,
  type Pool,
} from '@ccs/shared';
import type { NatsConnection } from 'nats';
import { checkWebhookUrl, type Resolver } from '../webhooks/destination.js';
import { webhookUrlForbidden } from '../errors.js';
import { listDeliveries, retryDelivery } from '../repositories/webhook-deliveries-repo.js';
import { createEndpoint, deleteEndpoint, enabledEventTypes, listEndpoints, updateEndpoint } from '../repositories/webhook-endpoints-repo.js';

/** How registration checks a URL: WEBHOOK_ALLOW_TARGETS and the resolver (tests may pass their own). */
export interface UrlGuard {
  allow: Set<string>;
  resolve?: Resolver;
}

/**
 * 422 webhook_url_forbidden when the URL leads to an address no webhook may reach (docs/design.md §6):
 * a literal or a name resolving to loopback, private, link-local… The refused address stays in
 * the logs of this process; the answer says only which rule.
 */
async function assertAllowed(url: string, guard: UrlGuard): Promise<void> {
  const verdict = await checkWebhookUrl(url, guard);
  if (verdict.ok) return;
  const why =
    'spelling' in verdict.refusal
      ? 'its host is an IPv4 address written in a non-canonical form (write four decimal parts)'
      : `its host is or resolves to a ${verdict.refusal.range} address`;
  throw webhookUrlForbidden(why);
}

/**
 * The webhook subjects of the admin API and `npm run admin -- webhooks`: endpoints and their
 * deliveries, always of the request's app (another app's ids are not found). `wake` tells this
 * replica's sender that a retried delivery is due. A new or changed URL is checked first.
 */
export function webhookAdminEndpoints(pool: Pool, wake: () => void, nc: NatsConnection, prefix: string, guard: UrlGuard) {
  // Producers that write an event only when someone listens (the wallet) forget their cached answer.
  const changed = (appId: string) => nc.publish(prefixed(prefix, WebhooksChanged.subject), encodeJson(WebhooksChanged.payload.parse({ appId })));
  return [
    endpoint(AdminListWebhooks, async ({ appId }) => ({ endpoints: await listEndpoints(pool, appId) })),
    endpoint(AdminCreateWebhook, async ({ appId, ...c }) => {
      await assertAllowed(c.url, guard);
      const made = await createEndpoint(pool, appId, c);
      changed(appId);
      return made;
    }),
    endpoint(AdminUpdateWebhook, async ({ appId, endpointId, ...c }) => {
      if (c.url !== undefined) await assertAllowed(c.url, guard);
      const made = await updateEndpoint(pool, appId, endpointId, c);
      changed(appId);
      return made;
    }),
    endpoint(AdminDeleteWebhook, async ({ appId, endpointId }) => {
      await deleteEndpoint(pool, appId, endpointId);
      changed(appId);
      return {};
    }),
    endpoint(WebhookInterest, async ({ appId }) => ({ types: await enabledEventTypes(pool, appId) })),
    endpoint(AdminListWebhookDeliveries, async (q) => listDeliveries(pool, q)),
    endpoint(AdminRetryWebhookDelivery, async ({ appId, endpointId, deliveryId }) => {
      const delivery = await retryDelivery(pool, appId, endpointId, deliveryId);
      wake();
      return { delivery };
    }),
  ];
}

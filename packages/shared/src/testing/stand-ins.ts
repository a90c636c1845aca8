import { WebhookInterest, type WebhookEventType } from '../contracts/domain-events.js';
import { endpoint, type Endpoint } from '../runtime/endpoint.js';

/**
 * Contract-bound stand-ins for the neighbours a service asks while it works: each answers one
 * contract's subject through the service tier's responder, which validates the request and the
 * reply with the contract's zod schemas, so a stand-in cannot drift from the real service.
 */

/** Egress as the producers of webhook events ask it: the app's endpoints take `types` (default: none). */
export function webhookInterestStandIn(types: WebhookEventType[] = []): Endpoint<typeof WebhookInterest> {
  return endpoint(WebhookInterest, async () => ({ types }));
}

import { fileURLToPath } from 'node:url';
import { WebhookInterestCache, type ServiceDefinition } from '@ccs/shared';
import type { EgressConfig } from './config.js';
import { parseAllowTargets, systemResolver, type Resolver } from './webhooks/destination.js';
import { webhookAdminEndpoints } from './endpoints/webhooks.js';
import { retiredDurablesSweeper, takeOverRetiredDurables } from './consumers/durable-handover.js';
import { webhookConsumers } from './consumers/fan-out.js';
import { enabledEventTypes } from './repositories/webhook-endpoints-repo.js';
import { WebhookSender } from './workers/sender.js';

/**
 * The egress worker: the only process that connects to addresses a tenant chose. It owns the
 * apps' webhook endpoints, the events fanned out to them (from the grants stream) and their
 * deliveries (docs/webhooks.md), in its own schema, behind its own NATS user. Nothing else runs
 * here, so a hostile endpoint can slow or crash only webhook sending, never login or
 * registration (players) or the API (gateway).
 */
export function egressServiceWith(resolve: Resolver = systemResolver): ServiceDefinition<EgressConfig> {
  return {
    name: 'egress',
    version: '0.1.0',
    schema: 'egress',
    migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
    async build({ config, log, pool, nc, jsm, bus, metrics }) {
      // Before the consumers start: a durable renamed since the last start begins where its old name stands.
      await takeOverRetiredDurables(jsm, config.NATS_PREFIX, log);
      const sender = new WebhookSender(pool, config, log, metrics, resolve);
      const wake = () => sender.wake();
      const guard = { allow: parseAllowTargets(config.WEBHOOK_ALLOW_TARGETS), resolve };
      // Which events each app's endpoints take, from egress's own table (a change announced by any replica clears it).
      const interest = new WebhookInterestCache(bus, log, 60_000, 5_000, (appId) => enabledEventTypes(pool, appId));
      return {
        endpoints: webhookAdminEndpoints(pool, wake, nc, config.NATS_PREFIX, guard),
        consumers: webhookConsumers(wake, interest),
        workers: [sender, retiredDurablesSweeper(jsm, config.NATS_PREFIX, log), { start: () => undefined, stop: async () => interest.stop() }],
      };
    },
  };
}

export const egressService: ServiceDefinition<EgressConfig> = egressServiceWith();

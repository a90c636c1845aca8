import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@ccs/shared';
import type { EgressConfig } from './config.js';
import { parseAllowTargets, systemResolver, type Resolver } from './destination.js';
import { webhookAdminEndpoints } from './webhooks/admin-endpoints.js';
import { webhookConsumers } from './webhooks/fan-out.js';
import { WebhookSender } from './webhooks/sender.js';

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
    build({ config, log, pool, nc, metrics }) {
      const sender = new WebhookSender(pool, config, log, metrics, resolve);
      const wake = () => sender.wake();
      const guard = { allow: parseAllowTargets(config.WEBHOOK_ALLOW_TARGETS), resolve };
      return {
        endpoints: webhookAdminEndpoints(pool, wake, nc, config.NATS_PREFIX, guard),
        consumers: webhookConsumers(wake),
        workers: [sender],
      };
    },
  };
}

export const egressService: ServiceDefinition<EgressConfig> = egressServiceWith();

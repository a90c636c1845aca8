import { fileURLToPath } from 'node:url';
import { AppliedNotices, AtRestCipher, OutboxRelay, periodicWorker, WebhookInterestCache, type ServiceDefinition } from '@ccs/shared';
import { createAppleTrust } from './apple/index.js';
import type { StoreConfig } from './config.js';
import { contentLoadedConsumer } from './consumers/content-loaded.js';
import { StoreContentReader } from './content/content-reader.js';
import type { StoreDeps } from './deps.js';
import { adminEndpoints } from './endpoints/admin.js';
import { appleNotificationEndpoint, googleNotificationEndpoint } from './endpoints/notifications.js';
import { moneySpentEndpoint } from './endpoints/money-spent.js';
import { verifyPurchaseEndpoint } from './endpoints/verify-purchase.js';
import { googlePlay } from './google/index.js';
import { consumeDue } from './purchases/consume.js';
import { ComplianceProfiles } from './purchases/compliance-profiles.js';
import { storedCredentialKey } from './repositories/credentials-repo.js';

/**
 * The store service: verifies App Store and Google Play purchases, grants what they bought exactly
 * once, and takes it back when the store refunds it (docs/store.md). It owns the `store` schema and
 * is the only process that verifies store signatures (CPU) or calls Google (an outside service
 * that may be slow), so neither can slow identity, the wallet or chests.
 */
export const storeService: ServiceDefinition<StoreConfig> = {
  name: 'store',
  version: '0.1.0',
  schema: 'store',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build({ config, log, pool, nc, js, bus }) {
    const relay = new OutboxRelay(pool, js, config.NATS_PREFIX, log);
    const deps: StoreDeps = {
      config,
      log,
      pool,
      bus,
      relay,
      notices: new AppliedNotices(nc, config.NATS_PREFIX),
      content: new StoreContentReader(pool),
      cipher: new AtRestCipher({
        configured: config.STORE_CREDENTIALS_KEY,
        setting: 'STORE_CREDENTIALS_KEY',
        what: "the apps' Google service-account keys",
        stored: (candidate) => storedCredentialKey(pool, candidate),
        log,
      }),
      interest: new WebhookInterestCache(bus, log),
      profiles: new ComplianceProfiles(bus),
    };
    // Apple's root (pinned) and the studio's test roots, read once: a bad one stops the start.
    const apple = createAppleTrust({ extraRoots: config.STORE_APPLE_ROOT_CERTS });
    const google = googlePlay(config);
    return {
      endpoints: [
        verifyPurchaseEndpoint(deps, apple, google),
        appleNotificationEndpoint(deps, apple),
        googleNotificationEndpoint(deps, google),
        moneySpentEndpoint(deps),
        ...adminEndpoints(deps),
      ],
      consumers: [contentLoadedConsumer(pool, log, deps.content)],
      workers: [
        relay,
        { start: () => undefined, stop: async () => (deps.interest.stop(), deps.profiles.stop()) },
        periodicWorker({ log, everyMs: config.STORE_CONSUME_INTERVAL_MS, what: 'Google purchases consumed', pass: () => consumeDue(deps, google) }),
      ],
    };
  },
};

import { fileURLToPath } from 'node:url';
import { AppliedNotices, AtRestCipher, OutboxRelay, type ServiceDefinition } from '@ccs/shared';
import type { StoreConfig } from './config.js';
import { contentLoadedConsumer } from './consumers/content-loaded.js';
import { StoreContentReader } from './content.js';
import type { StoreDeps } from './deps.js';
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
    };
    return { endpoints: [], consumers: [contentLoadedConsumer(pool, log)], workers: [relay] };
  },
};

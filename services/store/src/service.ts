import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@ccs/shared';
import type { StoreConfig } from './config.js';

/**
 * The store service: verifies App Store and Google Play purchases, grants what they bought exactly
 * once, and claws it back when the store refunds it (docs/store.md). It owns the `store` schema.
 */
export const storeService: ServiceDefinition<StoreConfig> = {
  name: 'store',
  version: '0.1.0',
  schema: 'store',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build() {
    return { endpoints: [], consumers: [], workers: [] };
  },
};

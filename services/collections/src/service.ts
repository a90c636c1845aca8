import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@ccs/shared';
import type { CollectionsConfig } from './config.js';

/** The collections service. */
export const collectionsService: ServiceDefinition<CollectionsConfig> = {
  name: 'collections',
  version: '0.1.0',
  schema: 'collections',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build: () => ({ endpoints: [] }),
};

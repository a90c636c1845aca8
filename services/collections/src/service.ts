import { fileURLToPath } from 'node:url';
import type { BaseConfig, ServiceDefinition } from '@ccs/shared';

/** The collections service. */
export const collectionsService: ServiceDefinition<BaseConfig> = {
  name: 'collections',
  version: '0.1.0',
  schema: 'collections',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build: () => ({ endpoints: [] }),
};

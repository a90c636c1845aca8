import { fileURLToPath } from 'node:url';
import type { BaseConfig, ServiceDefinition } from '@ccs/shared';

/** The chests service. */
export const chestsService: ServiceDefinition<BaseConfig> = {
  name: 'chests',
  version: '0.1.0',
  schema: 'chests',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build: () => ({ endpoints: [] }),
};

import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@ccs/shared';
import type { ChestsConfig } from './config.js';

/** The chests service. */
export const chestsService: ServiceDefinition<ChestsConfig> = {
  name: 'chests',
  version: '0.1.0',
  schema: 'chests',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build: () => ({ endpoints: [] }),
};

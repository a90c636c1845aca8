import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@ccs/shared';
import type { PlayersConfig } from './config.js';

/** The players service. */
export const playersService: ServiceDefinition<PlayersConfig> = {
  name: 'players',
  version: '0.1.0',
  schema: 'players',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build: () => ({ endpoints: [] }),
};

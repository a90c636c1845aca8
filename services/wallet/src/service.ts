import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@ccs/shared';
import type { WalletConfig } from './config.js';

/** The wallet service. */
export const walletService: ServiceDefinition<WalletConfig> = {
  name: 'wallet',
  version: '0.1.0',
  schema: 'wallet',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build: () => ({ endpoints: [] }),
};

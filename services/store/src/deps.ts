import type { AppliedNotices, AtRestCipher, Bus, Logger, OutboxRelay, Pool } from '@ccs/shared';
import type { StoreConfig } from './config.js';
import type { StoreContentReader } from './content.js';

/** What the store's endpoints, consumers and workers depend on, built once in service.ts. */
export interface StoreDeps {
  config: StoreConfig;
  log: Logger;
  pool: Pool;
  bus: Bus;
  relay: OutboxRelay;
  /** Tells this process when the wallet and chests applied the grants it wrote (read-your-writes). */
  notices: AppliedNotices;
  content: StoreContentReader;
  /** Seals the apps' Google service-account keys. */
  cipher: AtRestCipher;
}

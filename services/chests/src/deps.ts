import type { AppliedNotices, Bus, Logger, OutboxRelay, Pool } from '@ccs/shared';
import type { NatsConnection } from 'nats';
import type { CatalogCache } from './cache/catalog-cache.js';
import type { ChestsConfig } from './config.js';
import type { DropTables } from './opening/drop-tables.js';

/** What the chests service's endpoints, consumers and workers are built from. */
export interface ChestsDeps {
  config: ChestsConfig;
  log: Logger;
  pool: Pool;
  bus: Bus;
  nc: NatsConnection;
  relay: OutboxRelay;
  /** Tells this process when consumers applied the grants it wrote (one subscription). */
  notices: AppliedNotices;
  cache: CatalogCache;
  drops: DropTables;
}

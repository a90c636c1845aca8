import type { AppliedNotices, Bus, Logger, OutboxRelay, Pool } from '@ccs/shared';
import type { NatsConnection } from 'nats';
import type { CatalogCache } from './cache/catalog-cache.js';
import type { ChestsConfig } from './config.js';
import type { SeedCipher } from './fairness/seed-cipher.js';
import type { DropTables } from './opening/drop-tables.js';
import type { OneAtATime } from './opening/one-at-a-time.js';

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
  /** Encrypts and decrypts the players' server seeds (docs/fairness.md). */
  cipher: SeedCipher;
  /** Queues one player's openings in this process, so a burst holds one pooled connection. */
  perPlayer: OneAtATime;
}

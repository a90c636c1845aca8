import type { AppliedNotices, Bus, ContentCache, Logger, OutboxRelay, Pool } from '@ccs/shared';
import type { NatsConnection } from 'nats';
import type { ChestsConfig } from './config.js';
import type { SeedCipher } from './fairness/seed-cipher.js';
import type { DropTables } from './opening/drop-tables.js';
import type { OneAtATime } from './opening/one-at-a-time.js';
import type { Simulations } from './simulation/runner.js';

/**
 * Points in the sagas where a test makes a step fail or the process stop, to prove the recovery
 * (see services/chests/test/support/faults.ts). Production builds the service without any: each
 * is an optional call, never a branch on configuration.
 */
export interface ChestsFaults {
  /** After an opening committed, before its grant is published (a crash there leaves it to the relay). */
  afterOpenCommit?(openingId: string): void;
  /** In the purchase's grant transaction, after its checks: a throw rolls the grant back. */
  inPurchaseGrant?(purchaseId: string): void;
  /**
   * After an opening (or a batch) read the player's pair, before its write: another replica's
   * opening may win the pair here (`attempt` counts from 1).
   */
  beforeOpeningWrite?(playerId: string, attempt: number): Promise<void>;
}

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
  cache: ContentCache;
  drops: DropTables;
  /** Encrypts and decrypts the players' server seeds (docs/fairness.md). */
  cipher: SeedCipher;
  /** Queues one player's openings in this process, so a burst holds one pooled connection. */
  perPlayer: OneAtATime;
  /** Odds simulations in worker threads, one per app at a time across replicas (a Postgres advisory lock). */
  simulations: Simulations;
  /** Test seams; empty in production. */
  faults: ChestsFaults;
}

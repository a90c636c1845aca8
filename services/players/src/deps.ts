import type { NatsConnection } from 'nats';
import type { AppliedNotices, Logger, OutboxRelay, Pool } from '@ccs/shared';
import type { PlayersConfig } from './config.js';
import type { PasswordHasher } from './credentials/passwords.js';
import type { AccessTokenSigner } from './tokens/access-tokens.js';
import type { KeyRing } from './tokens/signing-keys.js';

/** What the players endpoints depend on, built once in service.ts. */
export interface PlayersDeps {
  config: PlayersConfig;
  log: Logger;
  pool: Pool;
  nc: NatsConnection;
  relay: OutboxRelay;
  /** Tells this process when consumers applied the grants it wrote (one subscription). */
  notices: AppliedNotices;
  hasher: PasswordHasher;
  signer: AccessTokenSigner;
  keys: KeyRing;
}

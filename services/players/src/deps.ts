import type { NatsConnection } from 'nats';
import type { Logger, OutboxRelay, Pool } from '@ccs/shared';
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
  hasher: PasswordHasher;
  signer: AccessTokenSigner;
  keys: KeyRing;
}

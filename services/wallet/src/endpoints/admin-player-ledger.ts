import { AdminPlayerLedger, endpoint, type Pool } from '@ccs/shared';
import { latestLedgerEntries } from '../repositories/ledger-repo.js';

/** Admin API (player look-up): a player's latest ledger rows with their currency codes, and how many there are. */
export function adminPlayerLedgerEndpoint(pool: Pool) {
  return endpoint(AdminPlayerLedger, async ({ appId, playerId, limit }) => latestLedgerEntries(pool, appId, playerId, limit));
}

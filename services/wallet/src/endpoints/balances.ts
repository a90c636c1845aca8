import { appOf, endpoint, GetBalances, type Pool } from '@ccs/shared';
import { playerBalances } from '../repositories/balances-repo.js';

/** wallet.v1.balances: one player's balance of every currency of the app. */
export function balancesEndpoint(pool: Pool) {
  return endpoint(GetBalances, async (req, ctx) => ({ balances: await playerBalances(pool, appOf(ctx), req.playerId) }));
}

import { appOf, callerOf, endpoint, TradeParties } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { areConfirmedFriends } from '../repositories/friends-repo.js';
import { findPlayer } from '../repositories/players-repo.js';
import { playerErrors } from '../errors.js';

/**
 * players.v1.trade_parties (asked by collections before an offer): whether the caller and the
 * partner are confirmed friends, and when each account was made (the trading rules' minimum
 * account age). A partner not in the caller's app, another app's player included, is a 404.
 */
export function tradePartiesEndpoint(d: PlayersDeps) {
  return endpoint(TradeParties, async (req, ctx) => {
    const appId = appOf(ctx);
    const [caller, partner] = await Promise.all([findPlayer(d.pool, appId, callerOf(ctx)), findPlayer(d.pool, appId, req.partnerId)]);
    if (!caller || !partner) throw playerErrors.noPlayerWithId();
    return {
      friends: await areConfirmedFriends(d.pool, appId, caller.id, partner.id),
      callerCreatedAt: caller.createdAt.toISOString(),
      partnerCreatedAt: partner.createdAt.toISOString(),
    };
  });
}

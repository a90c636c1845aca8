import { withTransaction, type AdminTrade, type CallContext } from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { tradeErrors } from '../errors.js';
import { SUPPORT_ACTOR } from '../repositories/admin-trades-repo.js';
import { lockTrade, type TradeRecord } from '../repositories/trades-repo.js';
import { endOfferedIn } from './answer.js';
import { settleRefund } from './refunds.js';
import { shownState, tradeView } from './trade-view.js';

/** A trade for the studio: what its players see, and why it ended (support's cancel told apart from the offerer's). */
export function adminTradeView(t: TradeRecord, bySupport: boolean): AdminTrade {
  const view = tradeView(t);
  const reason = view.state === 'offered' ? null : view.state === 'cancelled' && bySupport ? 'cancelled_by_support' : view.state;
  return { ...view, reason };
}

/**
 * Support's cancel of an open trade (collections.v1.admin_cancel_trade): the offerer's cancel under
 * the actor `support`, in one transaction under the trade's lock (endOfferedIn: the copy and the
 * stamina point back, the offer's tokens owed back by their reference, the audit step and
 * `trade.ended`). An ended trade is 409 trade_ended; one mid-step (being offered or accepted),
 * 409 trade_busy; one past its expiry is ended as expired, and answered trade_ended. After the
 * commit the events go out and the refund is settled (the sweeper retries it otherwise), so the
 * tokens come back exactly once, by the reference the offer debited.
 */
export async function cancelBySupport(d: TradingDeps, appId: string, tradeId: string, ctx: CallContext): Promise<AdminTrade> {
  const done = await withTransaction(d.pool, async (tx) => {
    const t = await lockTrade(tx, appId, tradeId);
    if (!t || t.state === 'failed') throw tradeErrors.tradeNotFound();
    if (t.state !== 'offering' && t.state !== 'offered' && t.state !== 'accepting') throw tradeErrors.tradeEnded(shownState(t));
    if (t.state !== 'offered') throw tradeErrors.busy();
    const expired = t.expiresAt.getTime() <= t.now.getTime();
    return { expired, ...(await endOfferedIn(tx, t, expired ? 'expired' : 'cancelled', expired ? 'expiry' : SUPPORT_ACTOR, ctx)) };
  });
  void d.relay.publishNow(done.messages).catch(() => undefined);
  if (done.refund) await settleRefund(d, done.refund, { ...ctx, appId });
  if (done.expired) throw tradeErrors.tradeEnded('expired');
  return adminTradeView(done.trade, true);
}

import { ActOnTrade, appOf, callerOf, endpoint, GetTrade, ListTrades, OfferTrade } from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { tradeErrors } from '../errors.js';
import { findTrade, listTrades } from '../repositories/trades-repo.js';
import { actOnTrade } from '../trading/answer.js';
import { offerTrade } from '../trading/offer.js';
import { tradeView } from '../trading/trade-view.js';

/** collections.v1.offer_trade (trading/offer.ts). */
export function offerTradeEndpoint(d: TradingDeps) {
  return endpoint(OfferTrade, (req, ctx) => offerTrade(d, appOf(ctx), callerOf(ctx), req, ctx));
}

/** collections.v1.trade_action: accept, decline, cancel (trading/answer.ts). */
export function tradeActionEndpoint(d: TradingDeps) {
  return endpoint(ActOnTrade, (req, ctx) => actOnTrade(d, appOf(ctx), callerOf(ctx), req, ctx));
}

/** collections.v1.get_trade: one trade of the caller (offerer or partner); anyone else's is a 404. */
export function getTradeEndpoint(d: Pick<TradingDeps, 'pool'>) {
  return endpoint(GetTrade, async (req, ctx) => {
    const t = await findTrade(d.pool, appOf(ctx), callerOf(ctx), req.tradeId);
    if (!t) throw tradeErrors.tradeNotFound();
    return tradeView(t);
  });
}

/** collections.v1.list_trades: a page of the caller's trades, newest first. */
export function listTradesEndpoint(d: Pick<TradingDeps, 'pool'>) {
  return endpoint(ListTrades, async (req, ctx) => {
    const r = await listTrades(d.pool, appOf(ctx), callerOf(ctx), { role: req.role, states: req.states, page: req.page });
    return { total: r.total, trades: r.trades.map(tradeView) };
  });
}

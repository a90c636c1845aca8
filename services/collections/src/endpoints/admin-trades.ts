import { AdminCancelTrade, AdminPlayerTrades, endpoint } from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { cancelledBySupport } from '../repositories/admin-trades-repo.js';
import { listTrades } from '../repositories/trades-repo.js';
import { adminTradeView, cancelBySupport } from '../trading/support-cancel.js';

/** collections.v1.admin_player_trades: a page of the player's trades for the studio, newest first, each with why it ended. */
export function adminPlayerTradesEndpoint(d: Pick<TradingDeps, 'pool'>) {
  return endpoint(AdminPlayerTrades, async (req) => {
    const r = await listTrades(d.pool, req.appId.toLowerCase(), req.playerId.toLowerCase(), { page: req.page });
    const bySupport = await cancelledBySupport(
      d.pool,
      r.trades.map((t) => t.id),
    );
    return { total: r.total, trades: r.trades.map((t) => adminTradeView(t, bySupport.has(t.id))) };
  });
}

/** collections.v1.admin_cancel_trade: support ends an open trade (trading/support-cancel.ts). */
export function adminCancelTradeEndpoint(d: TradingDeps) {
  return endpoint(AdminCancelTrade, (req, ctx) =>
    cancelBySupport(d, req.appId.toLowerCase(), req.tradeId, { ...ctx, appId: req.appId.toLowerCase() }),
  );
}

import { randomUUID } from 'node:crypto';
import { periodicWorker, type CallContext, type Worker } from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { expiredOffers, tradeStateOf, refundsDue, stuckTrades } from '../repositories/trades-repo.js';
import { expireTrade, revertAccept } from '../trading/answer.js';
import { failOffer } from '../trading/offer.js';
import { settleRefund } from '../trading/refunds.js';
import { acceptReference, offerReference } from '../trading/steps/debit-tokens.js';

const BATCH = 100;

/**
 * One pass of the trades sweeper, over every app: offers past `offer_ttl_hours` expire (escrow,
 * stamina and tokens go back, `trade.ended` with reason `expired`); steps left mid-way longer than
 * TRADE_STUCK_MS (a crash, a wallet that never answered) are given up (an offer `offering`:
 * failed, everything back; an accept `accepting`: the partner's copy back, the trade open again),
 * each owing the wallet a refund of its reference; and owed refunds are settled. Every change is
 * conditional on the trade's state under its lock, so replicas may all run it, and a request
 * racing it on the same trade ends it in exactly one state. Returns how many things it did.
 */
export async function sweepTrades(d: TradingDeps): Promise<number> {
  const ctxOf = (appId: string): CallContext => ({ requestId: randomUUID(), appId });
  let n = 0;
  for (const t of await expiredOffers(d.pool, BATCH)) if (await expireTrade(d, t.appId, t.id, ctxOf(t.appId))) n += 1;
  for (const t of await stuckTrades(d.pool, d.config.TRADE_STUCK_MS, BATCH)) {
    const state = await tradeStateOf(d.pool, t.appId, t.id);
    if (state?.state === 'offering') {
      const reference = offerReference(t.id);
      if (await failOffer(d, t.appId, t.id, reference, 'sweeper')) n += 1;
    } else if (state?.state === 'accepting') {
      const reference = acceptReference(t.id, state.acceptAttempt);
      if (await revertAccept(d, t.appId, t.id, state.acceptAttempt, reference, 'sweeper')) n += 1;
    }
  }
  for (const r of await refundsDue(d.pool, d.config.TRADE_STUCK_MS / 10, BATCH)) if (await settleRefund(d, r.reference, ctxOf(r.appId))) n += 1;
  return n;
}

/** The trades sweeper as a worker: a pass at start, then every TRADE_SWEEP_INTERVAL_MS. */
export function tradesSweeper(d: TradingDeps, everyMs: number): Worker {
  return periodicWorker({ log: d.log, everyMs, what: 'trades expired, given up or refunded', pass: () => sweepTrades(d) });
}

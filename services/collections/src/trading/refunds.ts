import { compensateStep, type CallContext } from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { refundSettled } from '../repositories/trades-repo.js';
import { debitTokens } from './steps/debit-tokens.js';

/**
 * Settles a refund a trade owes (trade_refunds): the `debit-tokens` step's compensation by its
 * reference (the wallet refunds that debit once, or voids a reference it never debited), then the
 * row is marked done. False when the wallet cannot be reached: the row stays for the sweeper.
 */
export async function settleRefund(d: Pick<TradingDeps, 'bus' | 'pool' | 'log'>, reference: string, ctx: CallContext): Promise<boolean> {
  try {
    await compensateStep(debitTokens(d.bus), { reference }, ctx);
    await refundSettled(d.pool, reference);
    return true;
  } catch (err) {
    d.log.warn({ err: String(err), reference }, 'trade refund not settled yet; the trades sweeper will retry it');
    return false;
  }
}

import { applicableMoneyLimits, complianceInForce, moneyPaymentRefusal, type CallContext, type Queryable } from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import { storeErrors } from '../errors.js';
import type { StoreSnapshot } from '../repositories/content-repo.js';
import { findPurchase, lockPlayerMoney, moneyTotals } from '../repositories/purchases-repo.js';
import type { VerifiedTransaction } from './verified.js';

/** A check the claim of a transaction runs first, in its own database transaction: it throws to refuse the claim. */
export type ClaimGuard = (tx: Queryable) => Promise<void>;

/**
 * Spend limits counted in money (compliance.spend_limits with `money`, the content's or a rule
 * pack's): which of them hold the player is decided from their declared country and birth year
 * (asked of players, as chests does) exactly as for the limits in units of paid currency
 * (`applicableMoneyLimits`). None holding the player: nothing to check (undefined). Otherwise the
 * answer is the guard the claim runs in its transaction, under the player's money lock, so racing
 * transactions of one player are counted one after the other: the UTC day's and month's verified
 * spend (refunded transactions left out) is converted into each limit's money and the transaction
 * refused when it would pass one (403 `spend_limit_reached`) or cannot be counted (403
 * `spend_limit_unverifiable`): nothing is recorded or granted (docs/store.md, "Spend limits in
 * money", says what becomes of the payment). A transaction the store already holds (a replay, or
 * another player's) is left to the claim's own answer.
 */
export async function checkMoneyLimits(
  deps: StoreDeps,
  appId: string,
  playerId: string,
  snapshot: StoreSnapshot | undefined,
  verified: VerifiedTransaction,
  ctx: CallContext,
): Promise<ClaimGuard | undefined> {
  const rules = snapshot?.compliance;
  if (!rules || !complianceInForce(rules).spend_limits.some((l) => l.money !== undefined)) return undefined;
  const limits = applicableMoneyLimits(rules, await deps.profiles.of(ctx));
  if (!limits.length) return undefined;
  return async (tx) => {
    await lockPlayerMoney(tx, appId, playerId);
    const known = await findPurchase(tx, verified.platform, verified.transactionId);
    // Only a row a refund's reversal left unclaimed in this app is claimed anew; any other answers as the claim says.
    if (known && !(known.state === 'unclaimed' && known.appId === appId)) return;
    const refusal = moneyPaymentRefusal(limits, await moneyTotals(tx, appId, playerId), rules.money_rates, verified.price);
    if (!refusal) return;
    deps.log.info(
      { code: refusal.code, platform: verified.platform, transactionId: verified.transactionId, limit: refusal.standing },
      'store transaction refused by a spend limit in money',
    );
    throw refusal.code === 'spend_limit_reached'
      ? storeErrors.spendLimitReached(refusal.standing, verified.price)
      : storeErrors.spendLimitUnverifiable(refusal.currency, refusal.standing);
  };
}

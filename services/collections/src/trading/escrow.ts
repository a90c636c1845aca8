import type { Queryable, TradingRules } from '@ccs/shared';
import { lockHoldings } from '../repositories/duplicates-repo.js';
import { giveCopy } from '../repositories/holdings-repo.js';
import { lockTradePlayer, saveTradePlayer } from '../repositories/trade-players-repo.js';
import type { TradeRecord } from '../repositories/trades-repo.js';
import { returnStamina } from './stamina.js';

/**
 * What goes back to the offerer of a trade that did not complete, in the caller's transaction
 * (which holds the trade's lock and has just moved it out of its open state, so this runs once):
 * the escrowed copy of `give` into the collection, the stamina point (when the offer spent one and
 * the content still has stamina), and, for an offer that never became one (`failed`), its place
 * in the day's cap. Locks: the player's trade row, then the holding, as an offer takes them.
 */
export async function returnToOfferer(tx: Queryable, t: TradeRecord, rules: TradingRules | null, opts: { uncountOffer: boolean }): Promise<void> {
  if (t.staminaSpent || opts.uncountOffer) {
    const p = await lockTradePlayer(tx, t.appId, t.offererId, rules?.stamina?.max ?? 0);
    const mark =
      t.staminaSpent && rules?.stamina
        ? returnStamina(rules.stamina, { stamina: p.stamina, at: p.staminaAt }, p.now)
        : { stamina: p.stamina, at: p.staminaAt };
    const offersToday = opts.uncountOffer && p.offersDay === t.createdAt.toISOString().slice(0, 10) ? Math.max(0, p.offersToday - 1) : p.offersToday;
    await saveTradePlayer(tx, t.appId, t.offererId, { stamina: mark.stamina, staminaAt: mark.at, offersDay: p.offersDay, offersToday });
  }
  await lockHoldings(tx, [{ appId: t.appId, playerId: t.offererId, collectibleId: t.giveId }]);
  await giveCopy(tx, t.appId, t.offererId, t.giveId);
}

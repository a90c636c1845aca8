import { randomUUID } from 'node:crypto';
import {
  AppError,
  isUniqueViolation,
  runStep,
  TradeParties,
  withTransaction,
  type CallContext,
  type OfferTrade,
  type OutboxMessage,
  type RequestOf,
  type TradeView,
  type TradingRules,
} from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { tradeErrors } from '../errors.js';
import { lockHoldings } from '../repositories/duplicates-repo.js';
import { copiesHeld, takeCopies } from '../repositories/holdings-repo.js';
import { lockTradePlayer, saveTradePlayer } from '../repositories/trade-players-repo.js';
import { insertTrade, lockTrade, logTrade, ONE_OPEN_OFFER_INDEX, oweRefund, setTradeState, type TradeRecord } from '../repositories/trades-repo.js';
import { currentCollectibles, readTrading, type CollectibleInfo } from '../repositories/trading-repo.js';
import { returnToOfferer } from './escrow.js';
import { enqueueOffered } from './events.js';
import { settleRefund } from './refunds.js';
import { spendStamina } from './stamina.js';
import { debitTokens, offerReference } from './steps/debit-tokens.js';
import { tradeView } from './trade-view.js';

type Offer = RequestOf<typeof OfferTrade>;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A collectible named by an offer, or 404 pointing at the member that named it. */
function named(items: Map<string, CollectibleInfo>, id: string, member: 'give' | 'want'): CollectibleInfo {
  const item = items.get(id);
  if (!item)
    throw AppError.notFound('collectible_not_found', `No collectible "${id.slice(0, 100)}" in this app.`, { pointer: `/data/attributes/${member}` });
  return item;
}

/** Whether an account made at `createdAt` is old enough to trade by the database's clock `now`. */
export function oldEnough(rules: TradingRules, createdAt: string, now: Date): boolean {
  return now.getTime() - Date.parse(createdAt) >= rules.min_account_age_hours * HOUR_MS;
}

/** What an offer is checked against before anything is taken: content, the two collectibles, the partner. */
async function checkOffer(d: TradingDeps, appId: string, playerId: string, req: Offer, ctx: CallContext) {
  if (req.partnerId.toLowerCase() === playerId.toLowerCase()) throw tradeErrors.selfTrade();
  const rules = await readTrading(d.pool, appId);
  if (!rules?.enabled) throw tradeErrors.disabled();
  const items = await currentCollectibles(d.pool, appId, [req.give, req.want]);
  const give = named(items, req.give, 'give');
  const want = named(items, req.want, 'want');
  if (!rules.rarities[give.rarity]?.tradable) throw tradeErrors.notTradable(give.id, give.rarity);
  if (!rules.rarities[want.rarity]?.tradable) throw tradeErrors.notTradable(want.id, want.rarity);
  if (rules.same_rarity && give.rarity !== want.rarity) throw tradeErrors.rarityMismatch(give.rarity, want.rarity);
  const parties = await d.bus.request(TradeParties, { partnerId: req.partnerId }, ctx).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'player_not_found')
      throw AppError.notFound('player_not_found', 'No such player in this app.', { pointer: '/data/relationships/partner/data/id' });
    throw err;
  });
  if (rules.friends_only && !parties.friends) throw tradeErrors.notFriends();
  return { rules, give, want, callerCreatedAt: parties.callerCreatedAt };
}

/**
 * The trade saga's offer (docs/architecture.md, "The trade saga"), its steps in the shape of every
 * saga (packages/shared/src/runtime/saga-step.ts):
 * 1. `escrow-offer`, one transaction: the player's trade row locked (account age, the day's cap,
 *    a stamina point spent), the holding locked, a free copy of `give` taken out of the collection
 *    into the trade (409 not_owned without one), the trade inserted (`offering` when tokens are to
 *    be debited, else `offered` with its `trade.offered` event). A refusal rolls all of it back.
 * 2. `debit-tokens`: the rarity's token_cost from the wallet, referenced `trade:<id>:offer`. A
 *    refusal (409 insufficient_funds) gives everything back and fails the trade; no answer does
 *    the same and owes the wallet a refund of the reference (which voids it if nothing was debited).
 * 3. `offering` → `offered` with the event, unless the sweeper gave the offer up meanwhile (503).
 */
export async function offerTrade(d: TradingDeps, appId: string, playerId: string, req: Offer, ctx: CallContext): Promise<TradeView> {
  const checked = await checkOffer(d, appId, playerId, req, ctx);
  const actor = `player:${playerId.toLowerCase()}`;
  let { trade, messages } = await escrowOffer(d, { appId, playerId, partnerId: req.partnerId, ...checked }, ctx);
  if (trade.state === 'offering') {
    const id = trade.id;
    const reference = offerReference(id);
    const debit = await runStep(debitTokens(d.bus), { playerId, currency: trade.tokenCurrency!, amount: trade.giveCost, reference }, ctx);
    if (!debit.ok) {
      // Refused (nothing taken) or no answer (maybe taken: the reference is refunded or voided).
      const failed = await failOffer(d, appId, id, debit.kind === 'retryable' ? reference : undefined, actor);
      if (debit.kind === 'retryable' || !failed) {
        if (failed) await settleRefund(d, reference, ctx);
        throw tradeErrors.interrupted();
      }
      throw debit.error;
    }
    ({ trade, messages } = await withTransaction(d.pool, async (tx) => {
      const t = await lockTrade(tx, appId, id);
      // The sweeper gave the offer up meanwhile (and owes the refund): it never became one.
      if (t?.state !== 'offering') throw tradeErrors.interrupted();
      const offered = await setTradeState(tx, id, 'offered');
      await logTrade(tx, id, actor, 'offer_paid', 'offered');
      return { trade: offered, messages: [await enqueueOffered(tx, offered, ctx)] };
    }));
  }
  void d.relay.publishNow(messages).catch(() => undefined);
  return tradeView(trade);
}

/** What the `escrow-offer` step needs: who offers what to whom, under which rules. */
interface EscrowOffer {
  appId: string;
  playerId: string;
  partnerId: string;
  rules: TradingRules;
  give: CollectibleInfo;
  want: CollectibleInfo;
  callerCreatedAt: string;
}

/**
 * The `escrow-offer` step, one transaction (offerTrade's step 1). Nothing to compensate on a
 * refusal: it rolls back whole. Returns the trade, and its `trade.offered` event when it is
 * offered at once (no tokens to debit).
 */
async function escrowOffer(d: TradingDeps, o: EscrowOffer, ctx: CallContext): Promise<{ trade: TradeRecord; messages: OutboxMessage[] }> {
  const { appId, playerId, rules, give, want } = o;
  const currency = rules.token_currency ?? null;
  const cost = (rarity: string) => (currency ? (rules.rarities[rarity]?.token_cost ?? 0) : 0);
  const id = randomUUID();
  try {
    return await withTransaction(d.pool, async (tx) => {
      const p = await lockTradePlayer(tx, appId, playerId, rules.stamina?.max ?? 0);
      if (!oldEnough(rules, o.callerCreatedAt, p.now)) throw tradeErrors.accountTooNew(rules.min_account_age_hours);
      const offersToday = p.offersDay === p.today ? p.offersToday : 0;
      if (offersToday >= rules.daily_offer_cap) {
        const midnight = Date.parse(`${p.today}T00:00:00Z`) + DAY_MS;
        throw tradeErrors.dailyCap(rules.daily_offer_cap, (midnight - p.now.getTime()) / 1000);
      }
      let mark = { stamina: p.stamina, at: p.staminaAt };
      if (rules.stamina) {
        const spent = spendStamina(rules.stamina, mark, p.now);
        if ('retryAfterMs' in spent) throw tradeErrors.noStamina(spent.retryAfterMs / 1000);
        mark = spent.mark;
      }
      await lockHoldings(tx, [{ appId, playerId, collectibleId: give.id }]);
      if ((await copiesHeld(tx, appId, playerId, give.id)) === 0) throw tradeErrors.notOwned(give.id);
      const giveCost = cost(give.rarity);
      const t = await insertTrade(tx, {
        id,
        appId,
        offererId: playerId,
        partnerId: o.partnerId,
        giveId: give.id,
        wantId: want.id,
        giveRarity: give.rarity,
        wantRarity: want.rarity,
        tokenCurrency: currency,
        giveCost,
        wantCost: cost(want.rarity),
        staminaSpent: Boolean(rules.stamina),
        state: giveCost > 0 ? 'offering' : 'offered',
        ttlHours: rules.offer_ttl_hours,
      });
      await takeCopies(tx, appId, playerId, give.id, 1);
      await saveTradePlayer(tx, appId, playerId, { stamina: mark.stamina, staminaAt: mark.at, offersDay: p.today, offersToday: offersToday + 1 });
      await logTrade(tx, id, `player:${playerId.toLowerCase()}`, 'offer', t.state);
      return { trade: t, messages: t.state === 'offered' ? [await enqueueOffered(tx, t, ctx)] : [] };
    });
  } catch (err) {
    throw isUniqueViolation(err, ONE_OPEN_OFFER_INDEX) ? tradeErrors.offerExists() : err;
  }
}

/**
 * Gives an offer up that is still `offering` (its debit refused or unanswered, or left mid-way):
 * `failed`, the copy, stamina point and day's place back, and `refund` owed when given. False when
 * it is not `offering` any more (someone else gave it up).
 */
export async function failOffer(
  d: Pick<TradingDeps, 'pool'>,
  appId: string,
  id: string,
  refund: string | undefined,
  actor: string,
): Promise<boolean> {
  return withTransaction(d.pool, async (tx) => {
    const t = await lockTrade(tx, appId, id);
    if (t?.state !== 'offering') return false;
    await setTradeState(tx, id, 'failed');
    await returnToOfferer(tx, t, await readTrading(tx, appId), { uncountOffer: true });
    if (refund) await oweRefund(tx, appId, id, refund);
    await logTrade(tx, id, actor, 'offer_failed', 'failed');
    return true;
  });
}

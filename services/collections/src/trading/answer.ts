import {
  runStep,
  TradeParties,
  withTransaction,
  type ActOnTrade,
  type CallContext,
  type OutboxMessage,
  type PoolClient,
  type RequestOf,
  type TradeView,
  type TradingRules,
} from '@ccs/shared';
import { settleCompletionsIn, touchedBy } from '../completion/rewards.js';
import type { TradingDeps } from '../deps.js';
import { tradeErrors } from '../errors.js';
import { lockHoldings } from '../repositories/duplicates-repo.js';
import { copiesHeld, giveCopy, takeCopies } from '../repositories/holdings-repo.js';
import { findTrade, lockTrade, logTrade, oweRefund, setTradeState, type TradeRecord } from '../repositories/trades-repo.js';
import { currentCollectibles, readTrading } from '../repositories/trading-repo.js';
import { returnToOfferer } from './escrow.js';
import { enqueueCompleted, enqueueEnded } from './events.js';
import { oldEnough } from './offer.js';
import { settleRefund } from './refunds.js';
import { acceptReference, debitTokens, offerReference } from './steps/debit-tokens.js';
import { shownState, tradeView } from './trade-view.js';

type Action = RequestOf<typeof ActOnTrade>['action'];
export type EndReason = 'declined' | 'cancelled' | 'expired';

const ENDED = new Set(['completed', 'declined', 'cancelled', 'expired']);

/** What a transaction that ended or completed a trade leaves to do after its commit. */
interface Done {
  trade: TradeRecord;
  messages: OutboxMessage[];
  refund?: string;
  /** The trade had expired by server time when asked: answered 409 trade_ended once it is ended. */
  expiredOnAsk?: boolean;
}

/**
 * Ends an `offered` trade in the caller's transaction (which holds its lock): the state, the
 * offerer's copy and stamina point back, the offer's tokens owed back (trade_refunds), the audit
 * step and `trade.ended` with its reason.
 */
export async function endOfferedIn(tx: PoolClient, t: TradeRecord, reason: EndReason, actor: string, ctx: CallContext): Promise<Done> {
  const ended = await setTradeState(tx, t.id, reason);
  await returnToOfferer(tx, t, await readTrading(tx, t.appId), { uncountOffer: false });
  let refund: string | undefined;
  if (t.giveCost > 0) {
    refund = offerReference(t.id);
    await oweRefund(tx, t.appId, t.id, refund);
  }
  await logTrade(tx, t.id, actor, reason === 'expired' ? 'expire' : reason === 'declined' ? 'decline' : 'cancel', reason);
  return { trade: ended, messages: [await enqueueEnded(tx, ended, reason, ctx)], refund };
}

/** After a commit: the events out now (the relay publishes them otherwise), the refund settled (the sweeper retries it otherwise). */
async function afterCommit(d: TradingDeps, done: Done, ctx: CallContext): Promise<void> {
  void d.relay.publishNow(done.messages).catch(() => undefined);
  if (done.refund) await settleRefund(d, done.refund, { ...ctx, appId: done.trade.appId });
}

/** The checks every action makes on the locked trade: the caller's part in it, and its state. */
function checkAction(t: TradeRecord | undefined, playerId: string, action: Action): TradeRecord {
  const me = playerId.toLowerCase();
  if (!t || t.state === 'failed' || (t.offererId !== me && t.partnerId !== me)) throw tradeErrors.tradeNotFound();
  if (action === 'cancel' && t.offererId !== me) throw tradeErrors.notYourMove('cancel', 'offerer');
  if (action !== 'cancel' && t.partnerId !== me) throw tradeErrors.notYourMove(action, 'partner');
  if (ENDED.has(t.state)) throw tradeErrors.tradeEnded(shownState(t));
  if (t.state !== 'offered') throw tradeErrors.busy();
  return t;
}

/** An `offered` trade past its expiry by server time is ended as expired by whoever finds it first. */
const pastExpiry = (t: TradeRecord) => t.expiresAt.getTime() <= t.now.getTime();

/**
 * `decline` (the partner) or `cancel` (the offerer) of an open trade, in one transaction under the
 * trade's lock: everything goes back to the offerer (endOfferedIn). Any action on an ended trade
 * is 409 trade_ended with its state; on one being accepted right now, 409 trade_busy.
 */
async function endByPlayer(d: TradingDeps, appId: string, playerId: string, tradeId: string, action: 'decline' | 'cancel', ctx: CallContext) {
  const done = await withTransaction(d.pool, async (tx) => {
    const t = checkAction(await lockTrade(tx, appId, tradeId), playerId, action);
    if (pastExpiry(t)) return { ...(await endOfferedIn(tx, t, 'expired', 'expiry', ctx)), expiredOnAsk: true };
    return endOfferedIn(tx, t, action === 'decline' ? 'declined' : 'cancelled', `player:${playerId.toLowerCase()}`, ctx);
  });
  await afterCommit(d, done, ctx);
  if (done.expiredOnAsk) throw tradeErrors.tradeEnded('expired');
  return tradeView(done.trade);
}

/**
 * Takes back an accept left `accepting` (its debit refused or unanswered, or a crash): the
 * partner's copy back into their collection, the trade `offered` again, and `refund` (the accept's
 * reference) owed when given. False when the trade is not in that accept any more.
 */
export async function revertAccept(
  d: Pick<TradingDeps, 'pool'>,
  appId: string,
  id: string,
  attempt: number,
  refund: string | undefined,
  actor: string,
) {
  return withTransaction(d.pool, async (tx) => {
    const t = await lockTrade(tx, appId, id);
    if (t?.state !== 'accepting' || t.acceptAttempt !== attempt) return false;
    await lockHoldings(tx, [{ appId, playerId: t.partnerId, collectibleId: t.wantId }]);
    await giveCopy(tx, appId, t.partnerId, t.wantId);
    await setTradeState(tx, id, 'offered');
    if (refund) await oweRefund(tx, appId, id, refund);
    await logTrade(tx, id, actor, 'accept_reverted', 'offered');
    return true;
  });
}

/**
 * The trade saga's accept (docs/architecture.md, "The trade saga"):
 * 1. `escrow-accept`, one transaction under the trade's lock: the trade must be `offered` and the
 *    caller its partner; a free copy of `want` leaves the partner's collection (409 not_owned
 *    without one, the trade stays open); the trade is `accepting` (attempt n).
 * 2. `debit-tokens`: the rarity's token_cost from the partner, referenced `trade:<id>:accept:<n>`;
 *    a refusal or no answer reverts step 1 (and owes the refund of the reference for no answer).
 * 3. `complete`, one transaction under the trade's lock, only if it is still in attempt n: both
 *    copies land (the offerer's escrowed `give` with the partner, the partner's `want` with the
 *    offerer), the trade is `completed`, and the collections they complete are recorded with their
 *    rewards and `collection.completed`, with `trade.completed`, all in that transaction.
 */
async function acceptTrade(d: TradingDeps, appId: string, playerId: string, tradeId: string, ctx: CallContext): Promise<TradeView> {
  const actor = `player:${playerId.toLowerCase()}`;
  const seen = checkAction(await findTrade(d.pool, appId, playerId, tradeId), playerId, 'accept');
  const rules = await readTrading(d.pool, appId);
  if (!rules?.enabled) throw tradeErrors.disabled();
  await checkAccepterAge(d, rules, seen, ctx);
  const step1 = await withTransaction(d.pool, async (tx): Promise<Done | TradeRecord> => {
    const t = checkAction(await lockTrade(tx, appId, tradeId), playerId, 'accept');
    if (pastExpiry(t)) return { ...(await endOfferedIn(tx, t, 'expired', 'expiry', ctx)), expiredOnAsk: true };
    await lockHoldings(tx, [{ appId, playerId: t.partnerId, collectibleId: t.wantId }]);
    if ((await copiesHeld(tx, appId, t.partnerId, t.wantId)) === 0) throw tradeErrors.notOwned(t.wantId);
    await takeCopies(tx, appId, t.partnerId, t.wantId, 1);
    const accepting = await setTradeState(tx, t.id, 'accepting');
    await logTrade(tx, t.id, actor, 'accept', 'accepting');
    return accepting;
  });
  if ('messages' in step1) {
    await afterCommit(d, step1, ctx);
    throw tradeErrors.tradeEnded('expired');
  }
  const attempt = step1.acceptAttempt;
  if (step1.wantCost > 0 && step1.tokenCurrency) {
    const reference = acceptReference(tradeId, attempt);
    const debit = await runStep(
      debitTokens(d.bus),
      { playerId: step1.partnerId, currency: step1.tokenCurrency, amount: step1.wantCost, reference },
      ctx,
    );
    if (!debit.ok) {
      const reverted = await revertAccept(d, appId, tradeId, attempt, debit.kind === 'retryable' ? reference : undefined, actor);
      if (debit.kind === 'retryable' || !reverted) {
        if (reverted) await settleRefund(d, reference, ctx);
        throw tradeErrors.interrupted();
      }
      throw debit.error;
    }
  }
  const done = await complete(d, step1, attempt, actor, ctx);
  await afterCommit(d, done, ctx);
  return tradeView(done.trade);
}

/** The accepter's account age (the content's min_account_age_hours), asked of players. */
async function checkAccepterAge(d: TradingDeps, rules: TradingRules, t: TradeRecord, ctx: CallContext): Promise<void> {
  if (rules.min_account_age_hours === 0) return;
  const parties = await d.bus.request(TradeParties, { partnerId: t.offererId }, ctx);
  if (!oldEnough(rules, parties.callerCreatedAt, t.now)) throw tradeErrors.accountTooNew(rules.min_account_age_hours);
}

/** Step 3 of the accept: both copies move, completions and their rewards follow, in one transaction. */
async function complete(d: TradingDeps, accepting: TradeRecord, attempt: number, actor: string, ctx: CallContext): Promise<Done> {
  const { appId } = accepting;
  const items = await currentCollectibles(d.pool, appId, [accepting.giveId, accepting.wantId]);
  return withTransaction(d.pool, async (tx) => {
    const t = await lockTrade(tx, appId, accepting.id);
    // The sweeper took this accept back meanwhile (and owes its refund): nothing moves.
    if (t?.state !== 'accepting' || t.acceptAttempt !== attempt) throw tradeErrors.interrupted();
    await lockHoldings(tx, [
      { appId, playerId: t.offererId, collectibleId: t.wantId },
      { appId, playerId: t.partnerId, collectibleId: t.giveId },
    ]);
    await giveCopy(tx, appId, t.offererId, t.wantId);
    await giveCopy(tx, appId, t.partnerId, t.giveId);
    const completed = await setTradeState(tx, t.id, 'completed');
    await logTrade(tx, t.id, actor, 'complete', 'completed');
    // A copy received completes a collection as one from an opening would: once, with its reward.
    const received = [
      { id: t.offererId, item: items.get(t.wantId) },
      { id: t.partnerId, item: items.get(t.giveId) },
    ].flatMap(({ id, item }) =>
      item ? [{ payload: { openingId: t.id, appId, playerId: id, items: [{ collectionId: item.collectionId }] }, ctx }] : [],
    );
    const rewards = await settleCompletionsIn(tx, touchedBy(received));
    return { trade: completed, messages: [...rewards.messages, await enqueueCompleted(tx, completed, ctx)] };
  });
}

/** collections.v1.trade_action: accept, decline or cancel. */
export function actOnTrade(d: TradingDeps, appId: string, playerId: string, req: RequestOf<typeof ActOnTrade>, ctx: CallContext): Promise<TradeView> {
  return req.action === 'accept' ? acceptTrade(d, appId, playerId, req.tradeId, ctx) : endByPlayer(d, appId, playerId, req.tradeId, req.action, ctx);
}

/** The sweeper's expiry of one offer past its time: false when it is not open any more. */
export async function expireTrade(d: TradingDeps, appId: string, tradeId: string, ctx: CallContext): Promise<boolean> {
  const done = await withTransaction(d.pool, async (tx) => {
    const t = await lockTrade(tx, appId, tradeId);
    if (t?.state !== 'offered' || !pastExpiry(t)) return undefined;
    return endOfferedIn(tx, t, 'expired', 'sweeper', ctx);
  });
  if (done) await afterCommit(d, done, ctx);
  return done !== undefined;
}

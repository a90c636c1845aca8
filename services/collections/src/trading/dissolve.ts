import { randomUUID } from 'node:crypto';
import {
  DURABLE,
  enqueue,
  isUniqueViolation,
  publishAndAwaitEach,
  WalletCreditGrant,
  withTransaction,
  type CallContext,
  type ReplyOf,
  type RequestOf,
  type DissolveCollectible,
} from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { collectibleNotFound, tradeErrors } from '../errors.js';
import { lockHoldings } from '../repositories/duplicates-repo.js';
import { findDissolve, insertDissolve, type DissolveRow } from '../repositories/dissolves-repo.js';
import { copiesHeld, takeCopies } from '../repositories/holdings-repo.js';
import { currentCollectibles, readTrading } from '../repositories/trading-repo.js';

type Request = RequestOf<typeof DissolveCollectible>;
type Reply = ReplyOf<typeof DissolveCollectible>;

/** The wallet ledger reference of a dissolve's credit. */
export const dissolveReference = (dissolveId: string) => `dissolve:${dissolveId}`;

/**
 * Dissolves copies of one collectible into trade tokens, in one transaction under the holding's
 * lock (the lock grants and trade offers of the same holding take too, so a dissolve and an offer
 * of the last spare copy cannot both have it): the copies leave the collection, the dissolve is
 * recorded under its key, and the credit (reason `trade_dissolve`, referenced by the dissolve) goes
 * to the outbox with it. Then the credit is published and the answer waits, bounded by
 * TRADE_CREDIT_WAIT_MS, until the wallet applied it. A repeat with the same key answers the first
 * dissolve and takes nothing.
 */
export async function dissolve(d: TradingDeps, appId: string, playerId: string, req: Request, ctx: CallContext): Promise<Reply> {
  const key = req.idempotencyKey ?? req.retryKey ?? randomUUID();
  // A collectible that does not exist is not found, whatever the app's trading rules.
  const item = (await currentCollectibles(d.pool, appId, [req.collectibleId])).get(req.collectibleId);
  if (!item) throw collectibleNotFound(req.collectibleId);
  const rules = await readTrading(d.pool, appId);
  if (!rules?.enabled) throw tradeErrors.disabled();
  const perCopy = rules.dissolve?.[item.rarity];
  if (perCopy === undefined || !rules.token_currency) throw tradeErrors.notDissolvable(item.id, item.rarity);
  const currency = rules.token_currency;
  const replay = (first: DissolveRow): Reply => {
    if (first.collectibleId !== req.collectibleId || first.quantity !== req.quantity) throw tradeErrors.keyReused();
    return { ...answer(first), credited: true, replayed: req.idempotencyKey !== undefined };
  };
  let made: { row: DissolveRow; message: Awaited<ReturnType<typeof enqueue>> } | Reply;
  try {
    made = await withTransaction(d.pool, async (tx) => {
      await lockHoldings(tx, [{ appId, playerId, collectibleId: item.id }]);
      const first = await findDissolve(tx, appId, playerId, key);
      if (first) return replay(first);
      const copies = await copiesHeld(tx, appId, playerId, item.id);
      if (copies === 0) throw tradeErrors.notOwned(item.id);
      if (copies - req.quantity < rules.dissolve_keeps) throw tradeErrors.keptCopies(copies, rules.dissolve_keeps);
      await takeCopies(tx, appId, playerId, item.id, req.quantity);
      const row: DissolveRow = {
        id: randomUUID(),
        collectibleId: item.id,
        quantity: req.quantity,
        currency,
        amount: perCopy * req.quantity,
        copiesLeft: copies - req.quantity,
      };
      await insertDissolve(tx, appId, playerId, key, row);
      const credit = { currency, amount: String(row.amount), reference: dissolveReference(row.id) };
      const message = await enqueue(tx, WalletCreditGrant, row.id, { appId, playerId, reason: 'trade_dissolve', credits: [credit] }, ctx, {
        notify: d.notices.subject,
      });
      return { row, message };
    });
  } catch (err) {
    // The same key used at once for another collectible (another holding's lock): the first one's answer, or 409.
    if (!isUniqueViolation(err, 'dissolves_pkey')) throw err;
    const first = await findDissolve(d.pool, appId, playerId, key);
    if (!first) throw err;
    return replay(first);
  }
  if ('dissolveId' in made) return made;
  const [seen] = await publishAndAwaitEach(
    d,
    [made.message],
    [{ durable: DURABLE.walletCreditGrants, ids: [made.message.id] }],
    d.config.TRADE_CREDIT_WAIT_MS,
  );
  return { ...answer(made.row), credited: seen!.size === 1, replayed: false };
}

function answer(row: DissolveRow): Omit<Reply, 'credited' | 'replayed'> {
  return {
    dissolveId: row.id,
    collectibleId: row.collectibleId,
    quantity: row.quantity,
    tokens: { currency: row.currency, amount: row.amount },
    copiesLeft: row.copiesLeft,
  };
}

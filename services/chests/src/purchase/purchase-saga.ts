import { randomUUID } from 'node:crypto';
import { AppError, recordSagaOutcome, type CallContext, type ReplyOf, type PurchaseChests } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { currentContentVersion } from '../repositories/content-repo.js';
import { insertPurchase, transition } from '../repositories/purchases-repo.js';
import { checkCapacity } from './check-capacity.js';
import { debitStep } from './debit-step.js';
import { grantPurchasedChests } from './grant-step.js';

/** A purchase request of one player. */
export interface PurchaseCommand {
  appId: string;
  playerId: string;
  chestTypeId: string;
  currency: string;
  quantity: number;
}

/**
 * The purchase saga: (1) capacity check, nothing debited yet; (2) wallet debit, reference = the
 * purchase id recorded beforehand; (3) chests added in one transaction that checks the capacity
 * again. When (3) fails, (2) is compensated by a refund. A crash mid-way leaves the purchase
 * `pending` or `debited`, and the sweeper refunds it later.
 */
export async function runPurchase(deps: ChestsDeps, cmd: PurchaseCommand, ctx: CallContext): Promise<ReplyOf<typeof PurchaseChests>> {
  const [type, version] = await Promise.all([
    findChestType(deps.pool, cmd.appId, cmd.chestTypeId, { catalogOnly: true }),
    currentContentVersion(deps.pool, cmd.appId),
  ]);
  if (!type) throw chestErrors.chestTypeNotFound();
  const unitPrice = type.price[cmd.currency];
  if (unitPrice === undefined) throw chestErrors.priceUnavailable(cmd.currency);
  const content = version === undefined ? undefined : await deps.drops.content(cmd.appId, version);
  if (!content) throw chestErrors.contentUnavailable();
  const capacity = content.inventoryCapacity;

  await checkCapacity(deps.pool, { ...cmd, capacity });
  const purchaseId = randomUUID();
  const amount = String(unitPrice * cmd.quantity);
  await insertPurchase(deps.pool, { id: purchaseId, ...cmd, amount });

  let debit;
  try {
    debit = await debitStep.invoke(deps.bus, { purchaseId, playerId: cmd.playerId, currency: cmd.currency, amount }, ctx);
  } catch (err) {
    if (err instanceof AppError && err.status < 500) {
      await transition(deps.pool, purchaseId, ['pending'], 'failed', err.code);
      recordSagaOutcome('purchase', 'failed');
      throw err;
    }
    // The wallet did not answer: the debit may have happened. Refund now, or leave it to the sweeper.
    await compensate(deps, purchaseId, ['pending'], ctx);
    throw chestErrors.purchaseInterrupted();
  }
  await transition(deps.pool, purchaseId, ['pending'], 'debited');

  let added: { id: string; acquiredAt: string }[];
  try {
    added = await grantPurchasedChests(deps.pool, {
      purchaseId, appId: cmd.appId, playerId: cmd.playerId, chestTypeId: type.id, quantity: cmd.quantity, capacity,
      fail: deps.config.CHESTS_FAULT === 'fail_purchase_grant',
    });
  } catch (err) {
    await compensate(deps, purchaseId, ['debited'], ctx);
    if (err instanceof AppError) throw err;
    deps.log.error({ err, purchaseId }, 'purchase grant failed; debit refunded');
    throw chestErrors.purchaseInterrupted();
  }
  recordSagaOutcome('purchase', 'completed');
  // The answer is built from what is known: the type's presentation and the rows just added.
  const chests = added.map((c) => ({
    id: c.id, chestTypeId: type.id, name: type.name, description: type.description, images: type.images, source: 'purchased' as const, acquiredAt: c.acquiredAt,
  }));
  return { purchaseId, chests, amount, balance: debit.balance };
}

/**
 * Compensation of the debit: refund, then settle the purchase as refunded (or failed when nothing
 * had been debited). If the wallet cannot be reached the purchase stays unsettled for the sweeper.
 */
async function compensate(deps: ChestsDeps, purchaseId: string, from: ('pending' | 'debited')[], ctx: CallContext): Promise<void> {
  if (!(await transition(deps.pool, purchaseId, from, 'compensating'))) return;
  try {
    const outcome = await debitStep.compensate(deps.bus, purchaseId, ctx);
    await transition(deps.pool, purchaseId, ['compensating'], outcome === 'refunded' ? 'refunded' : 'failed');
    recordSagaOutcome('purchase', outcome === 'refunded' ? 'compensated' : 'failed');
  } catch (err) {
    deps.log.warn({ err: String(err), purchaseId }, 'refund failed; the purchase sweeper will retry it');
  }
}

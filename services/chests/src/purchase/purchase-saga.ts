import { randomUUID } from 'node:crypto';
import { AppError, isUniqueViolation, PurchaseChests, recordSagaOutcome, type CallContext, type ReplyOf } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { catalogVersion } from '../cache/content-version.js';
import { findPurchaseByKey, insertPurchase, transition } from '../repositories/purchases-repo.js';
import { checkCapacity } from './check-capacity.js';
import { checkPaidUse } from '../compliance/gate.js';
import { debitStep } from './debit-step.js';
import { grantPurchasedChests } from './grant-step.js';

/** A purchase request of one player. */
export interface PurchaseCommand {
  appId: string;
  playerId: string;
  chestTypeId: string;
  currency: string;
  quantity: number;
  idempotencyKey?: string;
}

/**
 * The purchase saga: (1) compliance gates and capacity check, nothing debited yet; (2) wallet debit, reference = the
 * purchase id recorded beforehand; (3) chests added in one transaction that checks the capacity
 * again. When (3) fails, (2) is compensated by a refund. A crash mid-way leaves the purchase
 * `pending` or `debited`, and the sweeper refunds it later.
 */
export async function runPurchase(deps: ChestsDeps, cmd: PurchaseCommand, ctx: CallContext): Promise<ReplyOf<typeof PurchaseChests>> {
  if (cmd.idempotencyKey) {
    const first = await replayOf(deps, cmd);
    if (first) return first;
  }
  const [type, version] = await Promise.all([
    findChestType(deps.pool, cmd.appId, cmd.chestTypeId, { catalogOnly: true }),
    catalogVersion(deps, cmd.appId),
  ]);
  if (!type) throw chestErrors.chestTypeNotFound();
  const unitPrice = type.price[cmd.currency];
  if (unitPrice === undefined) throw chestErrors.priceUnavailable(cmd.currency);
  const content = version === undefined ? undefined : await deps.drops.content(cmd.appId, version);
  if (!content) throw chestErrors.contentUnavailable();
  // Region and age gates of paid currencies: refused before anything is recorded or debited.
  await checkPaidUse(deps, content.compliance, cmd.currency, 'purchase', ctx);
  const capacity = content.inventoryCapacity;

  await checkCapacity(deps.pool, { ...cmd, capacity });
  const purchaseId = randomUUID();
  const amount = String(unitPrice * cmd.quantity);
  try {
    await insertPurchase(deps.pool, { id: purchaseId, ...cmd, amount });
  } catch (err) {
    // A concurrent request with the same key recorded its purchase first.
    if (isUniqueViolation(err, 'purchases_idempotency')) throw chestErrors.purchaseKeyBusy();
    throw err;
  }

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
    let events;
    ({ added, events } = await grantPurchasedChests(deps.pool, {
      purchaseId,
      price: { currency: cmd.currency, amount: String(unitPrice) },
      ctx,
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestTypeId: type.id,
      quantity: cmd.quantity,
      capacity,
      fault: deps.faults.inPurchaseGrant,
      // Kept with the completed purchase for a retry with its Idempotency-Key.
      answer: cmd.idempotencyKey ? (ids) => ({ purchaseId, chests: chestViews(type, ids), amount, balance: debit.balance }) : undefined,
    }));
    // The purchase's events go out now rather than at the relay's next pass (it publishes them if this fails).
    void deps.relay.publishNow(events).catch(() => undefined);
  } catch (err) {
    await compensate(deps, purchaseId, ['debited'], ctx);
    if (err instanceof AppError) throw err;
    deps.log.error({ err, purchaseId }, 'purchase grant failed; debit refunded');
    throw chestErrors.purchaseInterrupted();
  }
  recordSagaOutcome('purchase', 'completed');
  return { purchaseId, chests: chestViews(type, added), amount, balance: debit.balance, replayed: false };
}

/** The answer's chests, from what is known: the type's presentation and the rows just added. */
function chestViews(type: { id: string; name: string; description: string; images: string[] }, added: { id: string; acquiredAt: string }[]) {
  return added.map((c) => ({
    id: c.id,
    chestTypeId: type.id,
    name: type.name,
    description: type.description,
    images: type.images,
    source: 'purchased' as const,
    acquiredAt: c.acquiredAt,
  }));
}

/**
 * A purchase made before with the command's Idempotency-Key: its answer again when it completed
 * with the same request; 409 when the key bought something else, or while that purchase is still
 * under way. A purchase that failed or was refunded released its key (undefined: buy now).
 */
async function replayOf(deps: ChestsDeps, cmd: PurchaseCommand): Promise<ReplyOf<typeof PurchaseChests> | undefined> {
  const first = await findPurchaseByKey(deps.pool, cmd.appId, cmd.playerId, cmd.idempotencyKey!);
  if (!first) return undefined;
  if (first.chestTypeId !== cmd.chestTypeId || first.currency !== cmd.currency || first.quantity !== cmd.quantity)
    throw chestErrors.purchaseKeyReused();
  const answer = first.status === 'completed' ? PurchaseChests.reply.safeParse(first.answer) : undefined;
  if (!answer?.success) throw chestErrors.purchaseKeyBusy();
  return { ...answer.data, replayed: true };
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

import { randomUUID } from 'node:crypto';
import { AppError, isUniqueViolation, PurchaseChests, recordSagaOutcome, type CallContext, type ReplyOf } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { findChestType, type ChestTypeRecord } from '../repositories/chest-types-repo.js';
import { catalogVersion } from '../cache/content-version.js';
import { findPurchaseByKey, insertPurchase, transition } from '../repositories/purchases-repo.js';
import { checkCapacity } from './check-capacity.js';
import { checkPaidUse } from '../compliance/gate.js';
import { compensateStep, runStep } from '../saga/runner.js';
import { debitWallet } from '../saga/steps/debit-wallet.js';
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
  // (1) Nothing is recorded or debited before these pass.
  const offer = await checkOffer(deps, cmd, ctx);
  await checkCapacity(deps.pool, { ...cmd, capacity: offer.capacity });
  const purchaseId = randomUUID();
  const amount = String(offer.unitPrice * cmd.quantity);
  await recordPending(deps, { id: purchaseId, ...cmd, amount });
  // (2) The debit; (3) the chests, or the debit compensated.
  const debit = await debitOrSettle(deps, purchaseId, cmd, amount, ctx);
  await transition(deps.pool, purchaseId, ['pending'], 'debited');
  const added = await grantOrCompensate(deps, { purchaseId, cmd, offer, amount, balance: debit.balance }, ctx);
  recordSagaOutcome('purchase', 'completed');
  return { purchaseId, chests: chestViews(offer.type, added), amount, balance: debit.balance, replayed: false };
}

/** What is bought and on what terms: the catalog chest type, its unit price in the currency, the inventory capacity. */
interface Offer {
  type: ChestTypeRecord;
  unitPrice: number;
  capacity: number;
}

/** The chest type on sale at a price in the command's currency, with the app's content; the region and age gates of paid currencies passed. */
async function checkOffer(deps: ChestsDeps, cmd: PurchaseCommand, ctx: CallContext): Promise<Offer> {
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
  return { type, unitPrice, capacity: content.inventoryCapacity };
}

/** Records the purchase as pending (its id is the debit's reference); 409 when a concurrent request holds its key. */
async function recordPending(deps: ChestsDeps, purchase: PurchaseCommand & { id: string; amount: string }): Promise<void> {
  try {
    await insertPurchase(deps.pool, purchase);
  } catch (err) {
    // A concurrent request with the same key recorded its purchase first.
    if (isUniqueViolation(err, 'purchases_idempotency')) throw chestErrors.purchaseKeyBusy();
    throw err;
  }
}

/** The wallet debit (step `debit-wallet`); a permanent failure (a refusal) settles the purchase as failed, a retryable one (no answer) leaves it to compensation. */
async function debitOrSettle(deps: ChestsDeps, purchaseId: string, cmd: PurchaseCommand, amount: string, ctx: CallContext) {
  const debit = await runStep(debitWallet(deps.bus), { playerId: cmd.playerId, currency: cmd.currency, amount, reference: purchaseId }, ctx);
  if (debit.ok) return debit.value;
  if (debit.kind === 'permanent') {
    await transition(deps.pool, purchaseId, ['pending'], 'failed', debit.error instanceof AppError ? debit.error.code : undefined);
    recordSagaOutcome('purchase', 'failed');
    throw debit.error;
  }
  // The wallet did not answer: the debit may have happened. Refund now, or leave it to the sweeper.
  await compensate(deps, purchaseId, ['pending'], ctx);
  throw chestErrors.purchaseInterrupted();
}

/** Adds the bought chests (and publishes their events); when that fails the debit is compensated. */
async function grantOrCompensate(
  deps: ChestsDeps,
  p: { purchaseId: string; cmd: PurchaseCommand; offer: Offer; amount: string; balance: string },
  ctx: CallContext,
): Promise<{ id: string; acquiredAt: string }[]> {
  const { purchaseId, cmd, offer } = p;
  try {
    const { added, events } = await grantPurchasedChests(deps.pool, {
      purchaseId,
      price: { currency: cmd.currency, amount: String(offer.unitPrice) },
      ctx,
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestTypeId: offer.type.id,
      quantity: cmd.quantity,
      capacity: offer.capacity,
      fault: deps.faults.inPurchaseGrant,
      // Kept with the completed purchase for a retry with its Idempotency-Key.
      answer: cmd.idempotencyKey ? (ids) => ({ purchaseId, chests: chestViews(offer.type, ids), amount: p.amount, balance: p.balance }) : undefined,
    });
    // The purchase's events go out now rather than at the relay's next pass (it publishes them if this fails).
    void deps.relay.publishNow(events).catch(() => undefined);
    return added;
  } catch (err) {
    await compensate(deps, purchaseId, ['debited'], ctx);
    if (err instanceof AppError) throw err;
    deps.log.error({ err, purchaseId }, 'purchase grant failed; debit refunded');
    throw chestErrors.purchaseInterrupted();
  }
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
    const outcome = await compensateStep(debitWallet(deps.bus), { reference: purchaseId }, ctx);
    await transition(deps.pool, purchaseId, ['compensating'], outcome === 'refunded' ? 'refunded' : 'failed');
    recordSagaOutcome('purchase', outcome === 'refunded' ? 'compensated' : 'failed');
  } catch (err) {
    deps.log.warn({ err: String(err), purchaseId }, 'refund failed; the purchase sweeper will retry it');
  }
}

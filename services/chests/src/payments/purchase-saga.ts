import { isUniqueViolation, planned, PurchaseChests, type CallContext, type ReplyOf } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { findChestType, type ChestTypeRecord } from '../repositories/chest-types-repo.js';
import { catalogVersion } from '../cache/content-version.js';
import { findPurchaseByKey, PURCHASE_KEY_INDEX } from '../repositories/payments-repo.js';
import { checkPaidUse } from '../compliance/gate.js';
import { runPayment, type PaymentSaga } from './runner.js';
import { checkCapacity } from './steps/check-capacity.js';
import { grantChests, type Granted } from './steps/grant-chests.js';
import type { SpendCheck } from './steps/record-payment.js';

/** A purchase request of one player. */
export interface PurchaseCommand {
  appId: string;
  playerId: string;
  chestTypeId: string;
  currency: string;
  quantity: number;
  idempotencyKey?: string;
  /** A banner pull's purchase: the chests are tagged with the banner (slug) and open as its pulls. */
  banner?: string;
}

/**
 * The purchase saga, as a list of steps for the payment runner (payments/runner.ts): the offer's
 * checks (chest type, price, content, compliance gates), then the `check-capacity` step, nothing
 * recorded or debited yet; the payment recorded `pending` (its id is the debit's reference), which
 * reserves its amount under the player's spend limits (403 `spend_limit_reached`); the
 * `debit-wallet` step; the `grant-chests` step, whose transaction checks the capacity again and
 * completes the payment. When the grant fails, the debit is compensated by a refund. A crash
 * mid-way leaves the payment `pending` or `debited`, and the payments sweeper refunds it later.
 */
export async function runPurchase(deps: ChestsDeps, cmd: PurchaseCommand, ctx: CallContext): Promise<ReplyOf<typeof PurchaseChests>> {
  if (cmd.idempotencyKey) {
    const first = await replayOf(deps, cmd);
    if (first) return first;
  }
  const offer = await checkOffer(deps, cmd, ctx);
  const amount = String(offer.unitPrice * cmd.quantity);
  const saga: PaymentSaga<Granted> = {
    payment: { kind: 'purchase', ...cmd, amount },
    spend: offer.spend,
    checks: [planned(checkCapacity(deps.pool), { ...cmd, capacity: offer.capacity })],
    effect: ({ payment, balance }) =>
      planned(grantChests(deps.pool, deps.faults.inPurchaseGrant), {
        purchaseId: payment.id,
        appId: cmd.appId,
        playerId: cmd.playerId,
        chestTypeId: offer.type.id,
        quantity: cmd.quantity,
        capacity: offer.capacity,
        banner: cmd.banner,
        price: { currency: cmd.currency, amount: offer.unitPrice.toFixed(2) },
        // Kept with the completed purchase for a retry with its Idempotency-Key.
        answer: cmd.idempotencyKey ? (added) => ({ purchaseId: payment.id, chests: chestViews(offer.type, added), amount, balance }) : undefined,
      }),
    interrupted: () => chestErrors.purchaseInterrupted(),
  };
  const done = await runPayment(deps, saga, ctx).catch((err: unknown) => {
    // A concurrent request with the same key recorded its purchase first.
    throw isUniqueViolation(err, PURCHASE_KEY_INDEX) ? chestErrors.purchaseKeyBusy() : err;
  });
  const { added, events } = done.effect!;
  // The purchase's events go out now rather than at the relay's next pass (it publishes them if this fails).
  void deps.relay.publishNow(events).catch(() => undefined);
  return { purchaseId: done.payment.id, chests: chestViews(offer.type, added), amount, balance: done.balance, replayed: false };
}

/** What is bought and on what terms: the catalog chest type, its unit price in the currency, the inventory capacity. */
interface Offer {
  type: ChestTypeRecord;
  unitPrice: number;
  capacity: number;
  /** The spend limits the player is held to in this currency (the gate's answer), if any. */
  spend?: SpendCheck;
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
  const spend = await checkPaidUse(deps, content.compliance, cmd.currency, 'purchase', ctx);
  return { type, unitPrice, capacity: content.inventoryCapacity, spend };
}

/**
 * The answer's chests, from what is known: the type's presentation and the rows just added. A
 * time-locked type's new chests are `locked` with no timer started, as the inventory shows them.
 */
function chestViews(type: ChestTypeRecord, added: { id: string; acquiredAt: string }[]) {
  return added.map((c) => ({
    id: c.id,
    chestTypeId: type.id,
    name: type.name,
    description: type.description,
    images: type.images,
    source: 'purchased' as const,
    acquiredAt: c.acquiredAt,
    ...(type.unlock ? { lock: { state: 'locked' as const, unlocksAt: null } } : {}),
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

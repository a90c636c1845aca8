import { randomUUID } from 'node:crypto';
import {
  domainEventId,
  DomainEventPublished,
  insertOutboxMessages,
  outboxMessage,
  StoreRefundApplied,
  withTransaction,
  type CallContext,
  type OutboxMessage,
  type Queryable,
  type StorePlatform,
} from '@ccs/shared';
import type { z } from 'zod';
import type { NotificationOutcomeSchema } from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import { eventAmounts } from '../purchases/products.js';
import { recordNotification, setNotificationOutcome } from '../repositories/notifications-repo.js';
import { findPurchase, insertUnclaimed, setRefundState, type PurchaseRow } from '../repositories/purchases-repo.js';
import { insertRefund, lastRefundOf, type NewRefund } from '../repositories/refunds-repo.js';

type Outcome = z.infer<typeof NotificationOutcomeSchema>;

/**
 * A store notification, verified and read: what it means for one transaction. `refund` takes
 * back what the purchase granted (Apple REFUND and REVOKE, Google's voided purchase), `reversal`
 * grants it again (Apple REFUND_REVERSED), `none` changes nothing (a test, a declined refund…).
 */
export interface StoreNotice {
  platform: StorePlatform;
  /** The notification's own id (Apple notificationUUID; Google `voided:<orderId>`, else Pub/Sub's message id): taken once per app. */
  notificationId: string;
  /** The store's name of it (REFUND, REVOKE, REFUND_REVERSED, voided, TEST, …). */
  type: string;
  kind: 'refund' | 'reversal' | 'none';
  transactionId?: string;
  storeProductId?: string;
  /** When the store says it happened (Apple signedDate, Google eventTimeMillis): an older notice arriving late changes nothing. */
  eventAt: Date;
}

/**
 * Applies a store notification exactly once (its id is recorded in the same transaction as its
 * effect), in the store's order (each transaction keeps the time of the last notice that moved its
 * refund state), whatever the arrival order, duplicates or races with the purchase's own grant:
 * - a refund of a granted purchase: the purchase becomes `refunded` and a refund grant goes out
 *   (the wallet debits what it credited, below zero if spent; chests revokes its unopened chests
 *   under `revoke_then_debt`), with the `store.refunded` webhook event;
 * - a reversal of a refunded purchase: `granted` again, and the reversal grant gives back what the
 *   refund took;
 * - a notice for a transaction nobody has claimed yet: recorded on an unclaimed row, so a refund
 *   first makes the later submission `receipt_revoked`;
 * - anything else (a refund of a refunded purchase, another app's transaction, a notice older
 *   than the last applied): recorded, nothing changes.
 * The row lock on the transaction serializes it with a claim in progress: a refund that waits for
 * the claim's commit sees the purchase granted and takes it back.
 */
export async function applyNotice(deps: StoreDeps, appId: string, n: StoreNotice, ctx: CallContext): Promise<Outcome> {
  const policy = (await deps.content.current(appId))?.store?.refunds.policy ?? 'revoke_then_debt';
  const result = await withTransaction(deps.pool, async (tx) => {
    const fresh = await recordNotification(tx, { ...n, appId, transactionId: n.transactionId ?? null, outcome: 'applied' });
    if (!fresh) return { outcome: 'duplicate' as const, messages: [] };
    const done =
      n.kind === 'none' || !n.transactionId ? { outcome: 'ignored' as const, messages: [] } : await applyToTransaction(tx, appId, n, policy, ctx);
    if (done.outcome !== 'applied') await setNotificationOutcome(tx, { ...n, appId }, done.outcome);
    return done;
  });
  if (result.messages.length)
    await deps.relay
      .publishNow(result.messages)
      .catch((err) => deps.log.warn({ err: String(err) }, 'refund messages not published yet; the outbox relay will'));
  return result.outcome;
}

type Applied = { outcome: Outcome; messages: OutboxMessage[] };

async function applyToTransaction(tx: Queryable, appId: string, n: StoreNotice, policy: NewRefund['policy'], ctx: CallContext): Promise<Applied> {
  const transactionId = n.transactionId!;
  const row = await findPurchase(tx, n.platform, transactionId, { lock: true });
  if (!row) {
    const inserted = await insertUnclaimed(tx, {
      id: randomUUID(),
      appId,
      platform: n.platform,
      transactionId,
      storeProductId: n.storeProductId ?? 'unknown',
      refunded: n.kind === 'refund',
      eventAt: n.eventAt,
    });
    // A claim committed meanwhile: this notice is applied to it, now under its lock.
    return inserted ? { outcome: 'applied', messages: [] } : applyToTransaction(tx, appId, n, policy, ctx);
  }
  if (row.appId !== appId) return { outcome: 'ignored', messages: [] };
  if (row.refundEventAt && n.eventAt <= row.refundEventAt) return { outcome: 'superseded', messages: [] };
  if (row.playerId === null) {
    await setRefundState(tx, row.id, n.kind === 'refund' ? 'refunded_unclaimed' : 'unclaimed', n.eventAt);
    return { outcome: 'applied', messages: [] };
  }
  const target = n.kind === 'refund' ? 'refunded' : 'granted';
  await setRefundState(tx, row.id, target, n.eventAt);
  if (row.state === target) return { outcome: 'ignored', messages: [] };
  const refund = n.kind === 'refund' ? refundOf(row, n, policy) : await reversalOf(tx, row, n);
  await insertRefund(tx, refund);
  const messages = refundMessages(row, refund, ctx);
  await insertOutboxMessages(tx, messages);
  return { outcome: 'applied', messages };
}

/** A refund of a granted purchase: every currency it credited, and its chests where the policy revokes them. */
function refundOf(row: PurchaseRow, n: StoreNotice, policy: NewRefund['policy']): NewRefund {
  const granted = row.granted ?? { currencies: [], chests: [] };
  return {
    id: randomUUID(),
    purchaseId: row.id,
    appId: row.appId,
    playerId: row.playerId!,
    kind: 'refund',
    reason: n.type,
    policy,
    currencies: granted.currencies,
    chestIds: policy === 'revoke_then_debt' ? granted.chests.map((c) => c.id) : [],
    notificationId: n.notificationId,
    eventAt: n.eventAt,
  };
}

/** A reversal gives back what the purchase's last refund took, under that refund's policy. */
async function reversalOf(tx: Queryable, row: PurchaseRow, n: StoreNotice): Promise<NewRefund> {
  const last = await lastRefundOf(tx, row.id);
  return {
    id: randomUUID(),
    purchaseId: row.id,
    appId: row.appId,
    playerId: row.playerId!,
    kind: 'reversal',
    reason: n.type,
    policy: last?.policy ?? 'debt',
    currencies: last?.currencies ?? row.granted?.currencies ?? [],
    chestIds: last?.chestIds ?? [],
    notificationId: n.notificationId,
    eventAt: n.eventAt,
  };
}

/** The refund grant (wallet, chests) and the `store.refunded` webhook event, ids fixed by the refund's. */
function refundMessages(row: PurchaseRow, r: NewRefund, ctx: CallContext): OutboxMessage[] {
  const who = { ...ctx, appId: r.appId, playerId: r.playerId };
  const grant = outboxMessage(
    StoreRefundApplied,
    r.id,
    {
      refundId: r.id,
      appId: r.appId,
      playerId: r.playerId,
      purchaseId: r.purchaseId,
      kind: r.kind,
      policy: r.policy,
      currencies: r.currencies,
      chestIds: r.chestIds,
    },
    who,
  );
  const eventId = domainEventId('store.refunded', r.id);
  const at = new Date().toISOString();
  const event = outboxMessage(
    DomainEventPublished,
    eventId,
    {
      eventId,
      type: 'store.refunded',
      appId: r.appId,
      playerId: r.playerId,
      occurredAt: at,
      data: {
        player_id: r.playerId,
        purchase_id: r.purchaseId,
        refund_id: r.id,
        platform: row.platform,
        transaction_id: row.transactionId,
        product_id: row.productId ?? row.storeProductId,
        kind: r.kind,
        reason: r.reason,
        policy: r.policy,
        currencies: eventAmounts(r.currencies),
        chest_ids: r.chestIds,
        refunded_at: at,
      },
    },
    who,
  );
  return [grant, event];
}

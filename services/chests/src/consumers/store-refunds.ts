import { consumer, DURABLE, StoreRefundApplied, type Delivery, type Queryable } from '@ccs/shared';
import type { z } from 'zod';
import type { ChestsDeps } from '../deps.js';
import { countUnopened, lockPlayerInventory } from '../repositories/inventory-repo.js';
import {
  lockRestorable,
  lockRevokedIds,
  markRestored,
  restoreToInventory,
  restoreToMailbox,
  revokeFromInventory,
  revokeFromMailbox,
  revokeUngranted,
  type RefundScope,
} from '../repositories/revoked-chests-repo.js';
import { grantRules } from '../repositories/content-repo.js';

/** Durable name of the chests service's store refund consumer. */
export const STORE_REFUNDS_CONSUMER = DURABLE.chestsStoreRefunds;

type Refund = z.infer<typeof StoreRefundApplied.payload>;

/** What applying one refund message did to its chests (the applied notice's payload). */
export interface RefundOutcome {
  /** Chests revoked now (from the inventory, the mailbox, or before their grant arrived). */
  revoked: number;
  /** Chests put back by a reversal. */
  restored: number;
}

const scopeOf = (r: Refund): RefundScope => ({ appId: r.appId, playerId: r.playerId, storePurchaseId: r.purchaseId, refundId: r.refundId });

/**
 * A refund under `revoke_then_debt`: each chest of `chestIds` still unopened leaves the inventory
 * (its row locked first, as an opening locks it) or the mailbox (waiting, unclaimed), and is
 * recorded revoked; an opened chest stays opened, with its opening. A chest found nowhere has not
 * been granted yet: it is recorded as a tombstone, so its grant adds nothing when it arrives. A
 * chest revoked already changes nothing.
 */
async function revoke(tx: Queryable, refund: Refund, ids: string[]): Promise<number> {
  const scope = scopeOf(refund);
  const revokedNow = await lockRevokedIds(tx, ids);
  let todo = ids.filter((id) => !revokedNow.has(id));
  let revoked = 0;
  for (const step of [revokeFromInventory, revokeFromMailbox, revokeUngranted]) {
    if (todo.length === 0) break;
    const done = new Set(await step(tx, scope, todo));
    revoked += done.size;
    todo = todo.filter((id) => !done.has(id));
  }
  return revoked;
}

/**
 * A reversal: each chest of `chestIds` that a refund of this purchase revoked comes back under its
 * id. It is placed as a grant is (docs/content.md, "Overflow mailbox"): into the inventory, where
 * an inventory chest gets back its type, source, acquisition time and timer; when the inventory is
 * full and the app's content sends overflow to the mailbox, into the mailbox for the content's
 * `mailbox_ttl_days`; with `refuse`, into the inventory beyond the capacity (a chest given back
 * must not be lost). A tombstone (its grant has not arrived) is only cleared: the grant then adds
 * the chest as usual. A chest not revoked changes nothing.
 */
async function restore(tx: Queryable, refund: Refund, ids: string[]): Promise<number> {
  const scope = scopeOf(refund);
  const chests = await lockRestorable(tx, scope, ids);
  const granted = chests.filter((c) => c.granted).map((c) => c.id);
  if (granted.length) {
    const rules = await grantRules(tx, refund.appId);
    if (!rules) throw new Error(`no content for app ${refund.appId}`);
    const room =
      rules.inventoryOverflow === 'mailbox'
        ? Math.max(0, rules.inventoryCapacity - (await countUnopened(tx, refund.appId, refund.playerId)))
        : Infinity;
    await restoreToInventory(tx, scope, granted.slice(0, room));
    await restoreToMailbox(tx, scope, granted.slice(room), rules.mailboxTtlDays);
  }
  await markRestored(
    tx,
    scope,
    chests.map((c) => c.id),
  );
  return chests.length;
}

/** One refund message's effect on its chests. */
async function applyRefund(tx: Queryable, refund: Refund): Promise<RefundOutcome> {
  const ids = [...new Set(refund.chestIds)].sort();
  if (ids.length === 0) return { revoked: 0, restored: 0 };
  if (refund.kind === 'reversal') return { revoked: 0, restored: await restore(tx, refund, ids) };
  if (refund.policy !== 'revoke_then_debt') return { revoked: 0, restored: 0 };
  return { revoked: await revoke(tx, refund, ids), restored: 0 };
}

/**
 * Applies the store's refunds to chests (`grants.store.refund`, docs/architecture.md "Store
 * refunds"): a refund under `revoke_then_debt` revokes the purchase's unopened chests, a reversal
 * restores what its refunds revoked; `debt` changes no chest (the wallet takes the currency back).
 * Each message once, by its refund id, recorded processed in the batch's transaction. The batch's
 * players' inventory locks are taken first, in key order (as grants, claims and purchases take
 * them), so a grant, a claim or a purchase of the same player waits for the revocation and sees it.
 * Each delivery's applied notice carries what it did (RefundOutcome), for the store waiting on it.
 */
export function storeRefundsConsumer(_deps?: Pick<ChestsDeps, 'pool'>) {
  return consumer({
    durable: STORE_REFUNDS_CONSUMER,
    event: StoreRefundApplied,
    batchSize: 20,
    processedId: (refund) => refund.refundId,
    async applyBatch(tx, batch: Delivery<Refund>[]) {
      const players = [...new Set(batch.map((d) => `${d.payload.appId} ${d.payload.playerId}`))].sort();
      for (const key of players) {
        const [appId, playerId] = key.split(' ') as [string, string];
        await lockPlayerInventory(tx, appId, playerId);
      }
      for (const d of batch) d.notice = await applyRefund(tx, d.payload);
    },
  });
}

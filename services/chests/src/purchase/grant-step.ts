import { randomUUID } from 'node:crypto';
import {
  domainEventId,
  DomainEventPublished,
  outboxMessage,
  insertOutboxMessages,
  withTransaction,
  type CallContext,
  type OutboxMessage,
  type Pool,
} from '@ccs/shared';
import { chestErrors } from '../errors.js';
import { countUnopened, insertPurchasedChests, lockPlayerInventory } from '../repositories/inventory-repo.js';
import { lockPurchase, storePurchaseAnswer, transition } from '../repositories/purchases-repo.js';

/** What the grant step adds: `quantity` chests of one type, for one debited purchase. */
export interface GrantInput {
  purchaseId: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  quantity: number;
  capacity: number;
  /** A test seam called after the checks, inside the transaction (see ChestsFaults). */
  fault?: (purchaseId: string) => void;
  /** The price of one chest, for the `chest.purchased` webhook events. */
  price: { currency: string; amount: string };
  ctx: CallContext;
  /** The saga's answer for these chests, kept with the completed purchase (for Idempotency-Key retries). */
  answer?: (added: { id: string; acquiredAt: string }[]) => unknown;
}

/**
 * Saga step 3, in one transaction: the purchase must still be `debited` (not taken over by the
 * sweeper); under the player's inventory lock the capacity is checked again (409 inventory_full),
 * then the chests are added (one statement), a `chest.purchased` event per chest written to the
 * outbox (one statement; returned, for the caller to publish after the commit) and the purchase
 * completed. Any failure rolls all of it back.
 */
export async function grantPurchasedChests(
  pool: Pool,
  input: GrantInput,
): Promise<{ added: { id: string; acquiredAt: string }[]; events: OutboxMessage[] }> {
  return withTransaction(pool, async (tx) => {
    const status = await lockPurchase(tx, input.purchaseId);
    if (status !== 'debited') throw chestErrors.purchaseInterrupted();
    await lockPlayerInventory(tx, input.appId, input.playerId);
    const used = await countUnopened(tx, input.appId, input.playerId);
    if (used + input.quantity > input.capacity) throw chestErrors.inventoryFull(input.capacity);
    input.fault?.(input.purchaseId);
    const ids = Array.from({ length: input.quantity }, () => randomUUID());
    const added = await insertPurchasedChests(tx, {
      ids,
      appId: input.appId,
      playerId: input.playerId,
      chestTypeId: input.chestTypeId,
      purchaseId: input.purchaseId,
    });
    const events = added.map((c) => purchasedEvent(input, c));
    await insertOutboxMessages(tx, events);
    await transition(tx, input.purchaseId, ['debited'], 'completed');
    if (input.answer) await storePurchaseAnswer(tx, input.purchaseId, input.answer(added));
    return { added, events };
  });
}

/** `chest.purchased` for one bought chest (docs/webhooks.md); event id from the inventory chest id. */
function purchasedEvent(input: GrantInput, c: { id: string; acquiredAt: string }): OutboxMessage {
  const eventId = domainEventId('chest.purchased', c.id);
  const data = {
    player_id: input.playerId,
    inventory_chest_id: c.id,
    chest_type_id: input.chestTypeId,
    price: input.price,
    purchased_at: c.acquiredAt,
  };
  const payload = { eventId, type: 'chest.purchased' as const, appId: input.appId, playerId: input.playerId, occurredAt: c.acquiredAt, data };
  return outboxMessage(DomainEventPublished, eventId, payload, { ...input.ctx, playerId: input.playerId });
}

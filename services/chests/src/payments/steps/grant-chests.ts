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
  type SagaStep,
} from '@ccs/shared';
import { chestErrors } from '../../errors.js';
import { countUnopened, insertPurchasedChests, lockPlayerInventory } from '../../repositories/inventory-repo.js';
import { lockPayment, storePurchaseAnswer, transitionPayment } from '../../repositories/payments-repo.js';

/** What the grant step adds: `quantity` chests of one type, for one debited purchase. */
export interface GrantInput {
  purchaseId: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  quantity: number;
  capacity: number;
  /** A banner pull's chests: the banner (slug) they open as (docs/design.md §8). */
  banner?: string;
  /** The price of one chest, for the `chest.purchased` webhook events. */
  price: { currency: string; amount: string };
  /** The saga's answer for these chests, kept with the completed purchase (for Idempotency-Key retries). */
  answer?: (added: { id: string; acquiredAt: string }[]) => unknown;
}

/** What the grant added, and the events (already in the outbox) for the caller to publish after the commit. */
export interface Granted {
  added: { id: string; acquiredAt: string }[];
  events: OutboxMessage[];
}

/**
 * The purchase saga's effect, in one transaction: the purchase must still be `debited` (not taken
 * over by the sweeper: 503 purchase_interrupted); under the player's inventory lock the capacity is
 * checked again (409 inventory_full), then the chests are added (one statement), a
 * `chest.purchased` event per chest written to the outbox (one statement) and the purchase
 * completed. Any failure rolls all of it back, so there is nothing of its own to compensate.
 * `fault` is a test seam called after the checks, inside the transaction (see ChestsFaults).
 */
export function grantChests(pool: Pool, fault?: (purchaseId: string) => void): SagaStep<GrantInput, Granted, never, void> {
  return {
    id: 'grant-chests',
    invoke: (input, ctx) =>
      withTransaction(pool, async (tx) => {
        const payment = { id: input.purchaseId, appId: input.appId };
        if ((await lockPayment(tx, payment)) !== 'debited') throw chestErrors.purchaseInterrupted();
        await lockPlayerInventory(tx, input.appId, input.playerId);
        const used = await countUnopened(tx, input.appId, input.playerId);
        if (used + input.quantity > input.capacity) throw chestErrors.inventoryFull(input.capacity);
        fault?.(input.purchaseId);
        const ids = Array.from({ length: input.quantity }, () => randomUUID());
        const added = await insertPurchasedChests(tx, { ...input, ids, purchaseId: input.purchaseId });
        const events = added.map((c) => purchasedEvent(input, c, ctx));
        await insertOutboxMessages(tx, events);
        await transitionPayment(tx, payment, ['debited'], 'completed');
        if (input.answer) await storePurchaseAnswer(tx, payment, input.answer(added));
        return { added, events };
      }),
    compensate: async () => undefined,
  };
}

/** `chest.purchased` for one bought chest (docs/webhooks.md); event id from the inventory chest id. */
function purchasedEvent(input: GrantInput, c: { id: string; acquiredAt: string }, ctx: CallContext): OutboxMessage {
  const eventId = domainEventId('chest.purchased', c.id);
  const data = {
    player_id: input.playerId,
    inventory_chest_id: c.id,
    chest_type_id: input.chestTypeId,
    price: input.price,
    purchased_at: c.acquiredAt,
  };
  const payload = { eventId, type: 'chest.purchased' as const, appId: input.appId, playerId: input.playerId, occurredAt: c.acquiredAt, data };
  return outboxMessage(DomainEventPublished, eventId, payload, { ...ctx, playerId: input.playerId });
}

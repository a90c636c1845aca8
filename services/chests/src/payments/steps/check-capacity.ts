import type { Queryable, SagaStep } from '@ccs/shared';
import { chestErrors } from '../../errors.js';
import { countUnopened } from '../../repositories/inventory-repo.js';

/** Whose inventory must hold how many more chests, at most `capacity` unopened. */
export interface CapacityCheck {
  appId: string;
  playerId: string;
  quantity: number;
  capacity: number;
}

/**
 * A check of the purchase saga (nothing to compensate): refuses a purchase that cannot fit
 * (409 inventory_full), before anything is recorded or debited. The grant step checks again under
 * the player's lock; this one spares a debit and a refund.
 */
export function checkCapacity(db: Queryable): SagaStep<CapacityCheck, void, never, void> {
  return {
    id: 'check-capacity',
    async invoke(p) {
      const used = await countUnopened(db, p.appId, p.playerId);
      if (used + p.quantity > p.capacity) throw chestErrors.inventoryFull(p.capacity);
    },
    compensate: async () => undefined,
  };
}

import type { Queryable } from '@ccs/shared';
import { chestErrors } from '../errors.js';
import { countUnopened } from '../repositories/inventory-repo.js';

/**
 * Saga step 1 (nothing to compensate): refuses a purchase that cannot fit, before any money
 * moves. The grant step checks again under the player's lock; this one spares a debit and refund.
 */
export async function checkCapacity(db: Queryable, p: { appId: string; playerId: string; quantity: number; capacity: number }): Promise<void> {
  const used = await countUnopened(db, p.appId, p.playerId);
  if (used + p.quantity > p.capacity) throw chestErrors.inventoryFull(p.capacity);
}

import { appOf, callerOf, ClaimMailboxItem, endpoint, ListMailbox, withTransaction } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { catalogVersion } from '../cache/content-version.js';
import { countUnopened, findUnopened, insertChest, lockPlayerInventory } from '../repositories/inventory-repo.js';
import { countWaiting, listWaiting, lockItem, markClaimed } from '../repositories/mailbox-repo.js';

/** The app's current inventory capacity (503 before its content arrived: nothing could be granted yet either). */
async function capacityOf(deps: ChestsDeps, appId: string): Promise<number> {
  const version = await catalogVersion(deps, appId);
  const content = version === undefined ? undefined : await deps.drops.content(appId, version);
  if (!content) throw chestErrors.contentUnavailable();
  return content.inventoryCapacity;
}

/** chests.v1.list_mailbox: the caller's waiting items, soonest to expire first, and the room a claim needs. */
export function listMailboxEndpoint(deps: ChestsDeps) {
  return endpoint(ListMailbox, async ({ page }, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const [items, total, used, capacity] = await Promise.all([
      listWaiting(deps.pool, appId, playerId, page),
      countWaiting(deps.pool, appId, playerId),
      countUnopened(deps.pool, appId, playerId),
      capacityOf(deps, appId),
    ]);
    return { items, total, capacity, used };
  });
}

/**
 * chests.v1.claim_mailbox_item: moves a waiting item into the inventory, as the chest of the same
 * id, when there is room. One transaction under the player's inventory lock (which grants and
 * purchases take too) with the item's row locked: of two claims at once, one moves it and the
 * other finds it claimed; the chest exists once.
 */
export function claimMailboxItemEndpoint(deps: ChestsDeps) {
  return endpoint(ClaimMailboxItem, async ({ itemId }, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const capacity = await capacityOf(deps, appId);
    return withTransaction(deps.pool, async (tx) => {
      await lockPlayerInventory(tx, appId, playerId);
      const item = await lockItem(tx, appId, playerId, itemId);
      if (!item || item.expired) throw chestErrors.mailboxItemNotFound();
      if (item.claimed) throw chestErrors.mailboxItemClaimed(item.id);
      if ((await countUnopened(tx, appId, playerId)) >= capacity) throw chestErrors.inventoryFull(capacity);
      await insertChest(tx, { id: item.id, appId, playerId, chestTypeId: item.chestTypeId, source: item.source });
      await markClaimed(tx, item.id);
      // The chest as the inventory shows it (read in the transaction, which sees the insert).
      return (await findUnopened(tx, appId, playerId, item.id))!;
    });
  });
}

import { ChestGrant, consumer, DURABLE, markProcessed, UuidSchema, withTransaction, type Queryable } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { findChestType, findChestTypeBySlug } from '../repositories/chest-types-repo.js';
import { currentContentVersion, loadContentVersion, type ContentSnapshot } from '../repositories/content-repo.js';
import { countUnopened, insertChest, lockPlayerInventory, type NewChest } from '../repositories/inventory-repo.js';
import { chestGranted, insertMailboxItem } from '../repositories/mailbox-repo.js';

/** Durable name of the chests service's grant consumer. */
export const GRANT_CONSUMER = DURABLE.chestsGrants;

/**
 * Puts a granted chest where the content says, once per chest id: in the inventory, or in the
 * mailbox when the inventory is full and `inventory_overflow` is `mailbox` (with `refuse` a grant
 * is added beyond the capacity: it cannot be refused after the fact, and must not be lost).
 * Under the player's inventory lock, so claims and purchases cannot change the count meanwhile
 * and a second delivery of the grant (another message id) sees where the first one put it.
 */
async function placeGrantedChest(tx: Queryable, chest: NewChest, content: ContentSnapshot): Promise<void> {
  await lockPlayerInventory(tx, chest.appId, chest.playerId);
  if (await chestGranted(tx, chest.id)) return;
  if (content.inventoryOverflow === 'mailbox' && (await countUnopened(tx, chest.appId, chest.playerId)) >= content.inventoryCapacity) {
    await insertMailboxItem(tx, { ...chest, ttlDays: content.mailboxTtlDays });
    return;
  }
  await insertChest(tx, chest);
}

/**
 * Applies a chest grant (the starter chest of a registration, rewards, studio grants): adds the
 * chest with the id the sender chose, once, to the inventory or the overflow mailbox. The type is
 * the message's (id or slug) or the app's starter type. When the app's content has not arrived
 * yet the handler throws, so the runtime retries it later.
 */
export function chestGrantConsumer(deps: Pick<ChestsDeps, 'pool'>) {
  return consumer({
    durable: GRANT_CONSUMER,
    event: ChestGrant,
    async handle(msg, info) {
      await withTransaction(deps.pool, async (tx) => {
        if (!(await markProcessed(tx, info.messageId, GRANT_CONSUMER))) return;
        const version = await currentContentVersion(tx, msg.appId);
        if (version === undefined) throw new Error(`no content for app ${msg.appId} yet`);
        const content = (await loadContentVersion(tx, msg.appId, version))!;
        const typeRef = msg.chestTypeId || content.starterChestType;
        const type = UuidSchema.safeParse(typeRef).success
          ? await findChestType(tx, msg.appId, typeRef, { catalogOnly: false })
          : await findChestTypeBySlug(tx, msg.appId, typeRef);
        if (!type) throw new Error(`unknown chest type ${typeRef} in app ${msg.appId}`);
        await placeGrantedChest(
          tx,
          { id: msg.inventoryChestId, appId: msg.appId, playerId: msg.playerId, chestTypeId: type.id, source: msg.source },
          content,
        );
      });
    },
  });
}

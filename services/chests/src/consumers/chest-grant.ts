import { ChestGrant, consumer, markProcessed, UuidSchema, withTransaction } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { findChestType, findChestTypeBySlug } from '../repositories/chest-types-repo.js';
import { currentContentVersion, loadContentVersion } from '../repositories/content-repo.js';
import { insertChest } from '../repositories/inventory-repo.js';

/** Durable name of the chests service's grant consumer. */
export const GRANT_CONSUMER = 'chests-grants';

/**
 * Applies a chest grant (the starter chest of a registration): inserts the chest with the id the
 * sender chose, once. The type is the message's (id or slug) or the app's starter type. When the
 * app's content has not arrived yet the handler throws, so the runtime retries it later.
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
        let typeRef = msg.chestTypeId;
        if (!typeRef) typeRef = (await loadContentVersion(tx, msg.appId, version))!.starterChestType;
        const type = UuidSchema.safeParse(typeRef).success
          ? await findChestType(tx, msg.appId, typeRef, { catalogOnly: false })
          : await findChestTypeBySlug(tx, msg.appId, typeRef);
        if (!type) throw new Error(`unknown chest type ${typeRef} in app ${msg.appId}`);
        await insertChest(tx, { id: msg.inventoryChestId, appId: msg.appId, playerId: msg.playerId, chestTypeId: type.id, source: msg.source });
      });
    },
  });
}

import { rollTable, enqueue, OpeningGranted, withTransaction, isUniqueViolation, type CallContext, type OpeningView, type Pool } from '@ccs/shared';
import { chestErrors } from '../errors.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { lockChest, markOpened } from '../repositories/inventory-repo.js';
import { findOpeningByKey, insertOpening } from '../repositories/openings-repo.js';
import type { DropTables } from './drop-tables.js';

/** Who opens which chest, and the id the opening (and its grant message) will have. */
export interface OpenCommand {
  appId: string;
  playerId: string;
  chestId: string;
  openingId: string;
  idempotencyKey?: string;
}

/**
 * Step 1 of the opening saga, in ONE transaction: lock the chest row; 404 when the app has no such
 * chest, 403 when another player owns it or it is already opened; else roll, mark it opened,
 * record the opening and write the grant message to the outbox. An already opened chest asked for
 * again with the Idempotency-Key of its opening returns that opening (`replayed`).
 */
export async function consumeChest(pool: Pool, drops: DropTables, cmd: OpenCommand, ctx: CallContext): Promise<{ opening: OpeningView; replayed: boolean }> {
  try {
    return await withTransaction(pool, async (tx) => {
      const chest = await lockChest(tx, cmd.appId, cmd.chestId);
      if (!chest) throw chestErrors.chestNotFound();
      if (chest.playerId !== cmd.playerId) throw chestErrors.chestNotOwned();
      if (chest.opened) {
        // A concurrent request with the same key may have opened it while we waited for the lock.
        const first = cmd.idempotencyKey && (await findOpeningByKey(tx, cmd.appId, cmd.playerId, cmd.idempotencyKey));
        if (first && first.chestId === cmd.chestId) return { opening: first, replayed: true };
        throw chestErrors.chestAlreadyOpened();
      }
      const type = await findChestType(tx, cmd.appId, chest.chestTypeId, { catalogOnly: false });
      if (!type) throw new Error(`chest type ${chest.chestTypeId} of chest ${chest.id} is missing`);
      const resolved = await drops.resolve(cmd.appId, type);
      const openedAt = new Date();
      const items = rollTable(resolved.table).map((it) => {
        const c = resolved.collectibles.get(it.collectibleId)!;
        return { ...it, name: c.name, description: c.description, images: c.images };
      });
      const opening: OpeningView = {
        openingId: cmd.openingId,
        chestId: chest.id,
        chestTypeId: type.id,
        openedAt: openedAt.toISOString(),
        items,
        experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
        rulesVersion: type.contentVersion,
      };
      await markOpened(tx, cmd.appId, chest.id, openedAt);
      await insertOpening(tx, { ...opening, appId: cmd.appId, playerId: cmd.playerId, idempotencyKey: cmd.idempotencyKey });
      await enqueue(
        tx,
        OpeningGranted,
        opening.openingId,
        {
          openingId: opening.openingId,
          appId: cmd.appId,
          playerId: cmd.playerId,
          chestTypeId: type.id,
          openedAt: opening.openedAt,
          experience: opening.experience,
          items: items.map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, collectionId: it.collectionId, rarity: it.rarity })),
        },
        ctx,
      );
      return { opening, replayed: false };
    });
  } catch (err) {
    // The key was used to open another chest (concurrently, or before).
    if (isUniqueViolation(err, 'openings_idempotency')) throw chestErrors.idempotencyKeyReused();
    throw err;
  }
}

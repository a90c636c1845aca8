import { isUniqueViolation, OpeningGranted, outboxMessage, rollTable, type CallContext, type OpeningView, type OutboxMessage, type Pool } from '@ccs/shared';
import { chestErrors } from '../errors.js';
import { findChestToOpen } from '../repositories/inventory-repo.js';
import { findOpeningByKey, recordOpening } from '../repositories/openings-repo.js';
import type { DropTables } from './drop-tables.js';

/** Who opens which chest, and the id the opening (and its grant message) will have. */
export interface OpenCommand {
  appId: string;
  playerId: string;
  chestId: string;
  openingId: string;
  idempotencyKey?: string;
  /** Where the grant's consumers announce that they applied it (an AppliedNotices subject). */
  notify?: string;
}

/** What step 1 produced: the opening, whether it is an earlier one replayed, and the grant to publish. */
export type Consumed = { opening: OpeningView; replayed: true } | { opening: OpeningView; replayed: false; grant: OutboxMessage };

/**
 * Step 1 of the opening saga: 404 when the app has no such chest, 403 when another player owns it
 * or it is already opened; else roll from its type's rules and, in ONE atomic statement
 * (`recordOpening`), consume the chest, record the opening and write the grant to the outbox.
 * The chest is read without a lock and no connection is held while the roll's tables load; the
 * statement consumes the chest only if it is still unopened, so of concurrent openings exactly one
 * wins and the others answer as for an opened chest. An already opened chest asked for again with
 * the Idempotency-Key of its opening returns that opening (`replayed`).
 */
export async function consumeChest(pool: Pool, drops: DropTables, cmd: OpenCommand, ctx: CallContext): Promise<Consumed> {
  const chest = await findChestToOpen(pool, cmd.appId, cmd.chestId);
  if (!chest) throw chestErrors.chestNotFound();
  if (chest.playerId !== cmd.playerId) throw chestErrors.chestNotOwned();
  if (chest.opened) return openedBefore(pool, cmd);
  const resolved = await drops.resolveType(cmd.appId, chest.chestTypeId, chest.contentVersion);
  const items = rollTable(resolved.table).map((it) => {
    const c = resolved.collectibles.get(it.collectibleId)!;
    return { ...it, name: c.name, description: c.description, images: c.images };
  });
  const opening: OpeningView = {
    openingId: cmd.openingId,
    chestId: chest.id,
    chestTypeId: resolved.type.id,
    openedAt: new Date().toISOString(),
    items,
    experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
    rulesVersion: resolved.type.contentVersion,
  };
  const grant = outboxMessage(
    OpeningGranted,
    opening.openingId,
    {
      openingId: opening.openingId,
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestTypeId: opening.chestTypeId,
      openedAt: opening.openedAt,
      experience: opening.experience,
      items: items.map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, collectionId: it.collectionId, rarity: it.rarity })),
    },
    ctx,
    { notify: cmd.notify },
  );
  let recorded: boolean;
  try {
    recorded = await recordOpening(pool, { ...opening, appId: cmd.appId, playerId: cmd.playerId, idempotencyKey: cmd.idempotencyKey }, grant);
  } catch (err) {
    // The key already opened another chest (concurrently, or before): nothing was written.
    if (isUniqueViolation(err, 'openings_idempotency')) return openedBefore(pool, cmd, chestErrors.idempotencyKeyReused());
    throw err;
  }
  // Another opening of this chest won meanwhile.
  if (!recorded) return openedBefore(pool, cmd);
  return { opening, replayed: false, grant };
}

/**
 * A chest already opened: the opening made with the caller's Idempotency-Key when that is the one
 * that opened this chest (a retry, maybe concurrent), else `refusal` (403 chest_already_opened).
 */
async function openedBefore(pool: Pool, cmd: OpenCommand, refusal = chestErrors.chestAlreadyOpened()): Promise<Consumed> {
  const first = cmd.idempotencyKey ? await findOpeningByKey(pool, cmd.appId, cmd.playerId, cmd.idempotencyKey) : undefined;
  if (first && first.chestId === cmd.chestId) return { opening: first, replayed: true };
  if (first) throw chestErrors.idempotencyKeyReused();
  throw refusal;
}

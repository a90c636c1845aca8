import type { FastifyRequest } from 'fastify';
import { AppError, GetInventory, type ErrorKind } from '@ccs/shared';
import { callContext } from '../../../lib/http.js';
import { inventoryChest, type InventoryChest } from '../../../resources/chests.js';

/** The kinds that mean the chests service could not answer now (not that it refused). */
const UNREACHABLE: ReadonlySet<ErrorKind> = new Set<ErrorKind>(['unavailable', 'overloaded', 'timeout']);

/**
 * The player's unopened chests from the chests service. The profile stays readable when that
 * service is down (the relationship then says so in its meta), unless the chests were asked for.
 */
export async function playerChests(request: FastifyRequest, playerId: string, required: boolean): Promise<InventoryChest[] | undefined> {
  try {
    const inv = await request.server.bus.request(
      GetInventory,
      { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' },
      // The player named, as the caller: after a login or a refresh the request carries no token yet.
      { ...callContext(request), playerId },
    );
    return inv.chests.map((c) => inventoryChest(c));
  } catch (err) {
    if (required || !(err instanceof AppError) || !UNREACHABLE.has(err.kind)) throw err;
    request.log.warn({ code: err.code }, 'chests unavailable; the player without its chests');
    return undefined;
  }
}

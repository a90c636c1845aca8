import { z } from 'zod';
import { defineQuery } from './subject.js';
import { UuidSchema } from './context.js';

/**
 * What the calling player (ctx.playerId; none for anonymous calls) may see of another player's
 * inventory: `full` (own, or a confirmed friend of a friends-only profile), `counts` (public
 * profile), or `denied` with the reason. Unknown owner in the app → 404 player_not_found.
 */
export const InventoryAccess = defineQuery(
  'players.v1.inventory_access',
  z.object({ ownerId: UuidSchema }),
  z.object({
    access: z.enum(['full', 'counts', 'denied']),
    code: z.enum(['profile_private', 'friends_only', 'guest_forbidden']).optional(),
  }),
  { callers: ['chests'] },
);

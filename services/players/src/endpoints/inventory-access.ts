import { appOf, endpoint, InventoryAccess, optionalCallerOf } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { areConfirmedFriends } from '../repositories/friends-repo.js';
import { findPlayer } from '../repositories/players-repo.js';
import { playerErrors } from '../errors.js';

/**
 * What the caller (ctx.playerId) may see of an owner's inventory, decided here because players
 * owns privacy and friendships: the owner sees everything; guests and anonymous callers see no
 * one else's; otherwise public → counts only, private → denied, friends → confirmed friends only.
 */
export function inventoryAccessEndpoint(d: PlayersDeps) {
  return endpoint(InventoryAccess, async (req, ctx) => {
    const appId = appOf(ctx);
    const owner = await findPlayer(d.pool, appId, req.ownerId);
    if (!owner) throw playerErrors.noPlayerWithId();
    const viewerId = optionalCallerOf(ctx);
    if (viewerId === owner.id) return { access: 'full' as const };
    const viewer = viewerId ? await findPlayer(d.pool, appId, viewerId) : undefined;
    if (!viewer || viewer.isAnonymous) return { access: 'denied' as const, code: 'guest_forbidden' as const };
    if (owner.privacy === 'public') return { access: 'counts' as const };
    if (owner.privacy === 'private') return { access: 'denied' as const, code: 'profile_private' as const };
    const friends = await areConfirmedFriends(d.pool, appId, owner.id, viewer.id);
    return friends ? { access: 'full' as const } : { access: 'denied' as const, code: 'friends_only' as const };
  });
}

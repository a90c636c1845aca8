import { AddFriend, appOf, callerOf, endpoint, ListFriends, RemoveFriend } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { findRelation, insertFriendRequest, listRelations, removeRelation } from '../repositories/friends-repo.js';
import { findPlayer } from '../repositories/players-repo.js';
import { playerErrors } from '../errors.js';

// A player of another app is as unknown as one that does not exist.

/** Sends a friend request; when the other player already asked, this confirms the friendship. */
export function addFriendEndpoint(d: PlayersDeps) {
  return endpoint(AddFriend, async (req, ctx) => {
    const appId = appOf(ctx);
    const me = callerOf(ctx);
    const other = req.playerId.toLowerCase();
    if (other === me) throw playerErrors.cannotBefriendSelf();
    if (!(await findPlayer(d.pool, appId, other))) throw playerErrors.unknownFriend();
    // A token can outlive its player (deleted meanwhile): refuse it like GET /players/me does,
    // instead of failing on the foreign key with a 500.
    if (!(await findPlayer(d.pool, appId, me))) throw playerErrors.tokenPlayerNotFound();
    const created = await insertFriendRequest(d.pool, appId, me, other);
    const friend = await findRelation(d.pool, appId, me, other);
    // Both players exist and a request was just stored; a concurrent removal is the only way here.
    if (!friend) throw playerErrors.friendshipChanged();
    return { friend, created };
  });
}

/** The calling player's friends and pending requests, both ways. */
export function listFriendsEndpoint(d: PlayersDeps) {
  return endpoint(ListFriends, async (_req, ctx) => ({
    friends: await listRelations(d.pool, appOf(ctx), callerOf(ctx)),
  }));
}

/** Ends a friendship, or cancels or declines a pending request; 404 only for an unknown player. */
export function removeFriendEndpoint(d: PlayersDeps) {
  return endpoint(RemoveFriend, async (req, ctx) => {
    const appId = appOf(ctx);
    const me = callerOf(ctx);
    if (!(await findPlayer(d.pool, appId, req.playerId))) {
      throw playerErrors.noPlayerWithId();
    }
    return { removed: await removeRelation(d.pool, appId, me, req.playerId) };
  });
}

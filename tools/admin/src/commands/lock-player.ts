import { AdminLockPlayer } from '@ccs/shared';
import { adminCall, findPlayerOrFail, required, requiredAppId, type AdminContext } from '../output.js';

/**
 * `lock-player --app <id> --player <id|email>` and `unlock-player …`: the studio's lock
 * (docs/operations.md, "Locking a player"). A locked player's access tokens are refused on every
 * request (403 player_locked) from the next one, on every gateway, and they get no new token
 * (login, refresh); unlocking lets their sessions refresh again.
 */
export async function lockPlayerCommand(c: AdminContext, o: { app?: string; player?: string }, locked: boolean): Promise<number> {
  const appId = requiredAppId(o.app);
  const player = await findPlayerOrFail(c, appId, required(o.player, 'player'));
  const r = await c.bus.request(AdminLockPlayer, { appId, playerId: player.playerId, locked }, adminCall());
  if (c.json) {
    c.io.out(JSON.stringify({ appId, playerId: r.playerId, locked: r.lockedAt !== null, lockedAt: r.lockedAt, changed: r.changed }));
    return 0;
  }
  const who = `player ${r.playerId}${player.email ? ` (${player.email})` : ''}`;
  if (locked) {
    c.io.out(r.changed ? `Locked ${who} at ${r.lockedAt}.` : `${who[0]!.toUpperCase()}${who.slice(1)} was already locked, since ${r.lockedAt}.`);
    c.io.progress('Their access tokens are refused from now on (403 player_locked), and login and refresh too, until unlock-player.');
  } else {
    c.io.out(r.changed ? `Unlocked ${who}.` : `${who[0]!.toUpperCase()}${who.slice(1)} was not locked.`);
    if (r.changed) c.io.progress('Their tokens work again, and they may log in and refresh.');
  }
  return 0;
}

import { z } from 'zod';
import { UuidSchema } from './context.js';
import { defineEvent, defineQuery, defineSubject } from './subject.js';

// The support desk's subjects of the players service (docs/console.md, "Players"): finding
// players, their sessions, ending those sessions, and locking a player out.

/** One player as a list of players shows them. */
export const AdminPlayerSummarySchema = z.object({
  playerId: UuidSchema,
  email: z.string().nullable(),
  isAnonymous: z.boolean(),
  createdAt: z.string(),
  /** When the studio locked the player (ISO 8601 UTC); null while not locked. */
  lockedAt: z.string().nullable(),
});
export type AdminPlayerSummary = z.infer<typeof AdminPlayerSummarySchema>;

/**
 * players: an app's players whose email starts with `emailPrefix` (in any case), ordered by
 * email; without a prefix, the newest first. Paged; `total` counts every match.
 */
export const AdminSearchPlayers = defineQuery(
  'players.v1.admin_search_players',
  z.object({
    appId: UuidSchema,
    emailPrefix: z.string().min(1).max(320).optional(),
    page: z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0).max(1_000_000) }),
  }),
  z.object({ players: z.array(AdminPlayerSummarySchema), total: z.number().int().min(0) }),
  { callers: ['gateway'] },
);

/** One session of a player: a refresh-token family, from its login to its newest token. */
export const AdminSessionSchema = z.object({
  /** The family's id (the `sid` of its access tokens). */
  id: UuidSchema,
  /** When it began: the login, registration or guest creation (ISO 8601 UTC). */
  createdAt: z.string(),
  /** When its newest refresh token was issued: the session's last refresh, or its start. */
  lastUsedAt: z.string(),
  /** When its newest refresh token expires. */
  expiresAt: z.string(),
  /** Whether a refresh token of it still works: not revoked, not used, not expired. */
  active: z.boolean(),
  /** When it was revoked (logout, a reused token, the studio), null if never. */
  revokedAt: z.string().nullable(),
});

/** players: a player's sessions, the newest first (at most `limit`), and how many are active. */
export const AdminPlayerSessions = defineQuery(
  'players.v1.admin_player_sessions',
  z.object({ appId: UuidSchema, playerId: UuidSchema, limit: z.number().int().min(1).max(100) }),
  z.object({ sessions: z.array(AdminSessionSchema), total: z.number().int().min(0), active: z.number().int().min(0) }),
  { callers: ['gateway'] },
);

/**
 * players: the studio ends every session of a player: each refresh-token family is revoked, so no
 * refresh works any more (the access tokens already issued live until they expire; a lock stops
 * them at once). 404 player_not_found for no such player of the app.
 */
export const AdminRevokeSessions = defineSubject(
  'players.v1.admin_revoke_sessions',
  z.object({ appId: UuidSchema, playerId: UuidSchema }),
  z.object({ playerId: UuidSchema, revokedSessions: z.number().int().min(0) }),
  { callers: ['gateway', 'admin'] },
);

/**
 * players: the studio locks (`locked: true`) or unlocks a player. A locked player gets no token
 * (login and refresh answer 403 player_locked) and every gateway refuses their access tokens
 * (403 player_locked), told by PlayerLockChanged before this answers. Locking a locked player
 * (or unlocking an unlocked one) changes nothing (`changed: false`). 404 player_not_found.
 */
export const AdminLockPlayer = defineSubject(
  'players.v1.admin_lock_player',
  z.object({ appId: UuidSchema, playerId: UuidSchema, locked: z.boolean() }),
  z.object({ playerId: UuidSchema, lockedAt: z.string().nullable(), changed: z.boolean() }),
  { callers: ['gateway', 'admin'] },
);

/** players: whether the calling player (ctx.playerId) is locked; a gateway asks before it trusts their token. */
export const GetPlayerLock = defineQuery('players.v1.player_lock', z.object({}), z.object({ locked: z.boolean() }), {
  callers: ['gateway'],
});

/**
 * Core NATS notification (not durable) that the studio locked or unlocked a player: players
 * publishes it after the commit and waits for the NATS server to take it before it answers; every
 * gateway forgets what it knew of that player's lock. A lost notice costs at most
 * PLAYER_LOCKS_TTL_MS.
 */
export const PlayerLockChanged = defineEvent(
  'events.players.lock_changed',
  z.object({ appId: UuidSchema, playerId: UuidSchema, locked: z.boolean() }),
  { publishers: ['players'], listeners: ['gateway'] },
);

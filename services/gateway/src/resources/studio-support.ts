import { z } from 'zod';
import { UuidSchema, type ReplyOf, AdminSearchPlayers, AdminGrantChests, AdminRevokeSessions, AdminLockPlayer } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, PageMeta, PaginationLinks, Timestamp } from './jsonapi.js';

/**
 * Response schemas of the support desk's admin routes: finding players, their sessions, chest
 * grants, locks, with the functions that render them, typed by those schemas.
 */

const LockedAt = Timestamp.nullable().describe(
  'When the studio locked the player (their tokens are refused: 403 `player_locked`); null while not locked.',
);

/** Players found: the newest, or those of an email prefix. */
export const AdminPlayerListDocument = component(
  'AdminPlayerListDocument',
  "A page of the app's players: the newest first, or (a search) those whose email starts with the prefix, by email. `GET /api/v1/admin/players/{id}` has the whole player.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('player'),
        id: UuidSchema,
        attributes: z.object({
          email: z.string().nullable().describe('Null for a guest.'),
          is_anonymous: z.boolean(),
          created_at: Timestamp,
          locked_at: LockedAt,
        }),
      }),
    ),
    meta: z.object({ total_count: Count.describe('Every player that matches, on all pages.'), page: PageMeta }),
    links: PaginationLinks.optional().describe('The pages of the newest players (a search has none: its prefix is in its body, never in a URL).'),
  }),
);

/** The chests a studio grant gave. */
export const StudioChestGrantDocument = component(
  'StudioChestGrantDocument',
  'The chests granted under the reference: their inventory ids (each reaches the inventory, or the mailbox when it is full, within moments). On a repeat of the reference: the same chests, with `meta.replayed: true`.',
  z.object({
    data: z.object({
      type: z.literal('chest_grant'),
      id: z.string().describe('The reference.'),
      attributes: z.object({
        chest_type: z.string().describe("The chest type's slug."),
        quantity: Count,
        chests: z.array(UuidSchema).describe('The inventory ids of the chests, derived from the reference.'),
      }),
    }),
    meta: z.object({
      replayed: z.boolean().describe('True when this reference was granted before: nothing was added.'),
      player_id: UuidSchema,
    }),
  }),
);

/** Sessions ended. */
export const StudioSessionsRevokedDocument = component(
  'StudioSessionsRevokedDocument',
  'Every session of the player ended: no refresh token of theirs works any more. Access tokens already issued live until they expire (`access_token_ttl_seconds`); a lock stops them at once.',
  z.object({
    data: z.object({
      type: z.literal('session_revocation'),
      id: UuidSchema.describe('The player id.'),
      attributes: z.object({
        revoked_sessions: Count.describe('How many sessions were active (had a refresh token that still worked) and are now ended.'),
      }),
    }),
  }),
);

/** A player's lock. */
export const StudioPlayerLockDocument = component(
  'StudioPlayerLockDocument',
  "Whether the player is locked now. A locked player's access tokens are refused on every request (403 `player_locked`), reads and writes alike, on every gateway from the next request; login and refresh answer 403 `player_locked`.",
  z.object({
    data: z.object({
      type: z.literal('player'),
      id: UuidSchema,
      attributes: z.object({ locked: z.boolean(), locked_at: LockedAt }),
    }),
    meta: z.object({ changed: z.boolean().describe('False when the player already was so: nothing changed.') }),
  }),
);

/** What `AdminPlayerListDocument` describes, as the gateway renders it. */
export type AdminPlayerListDocument = z.output<typeof AdminPlayerListDocument>;
/** What `StudioChestGrantDocument` describes, as the gateway renders it. */
export type StudioChestGrantDocument = z.output<typeof StudioChestGrantDocument>;
/** What `StudioPlayerLockDocument` describes, as the gateway renders it. */
export type StudioPlayerLockDocument = z.output<typeof StudioPlayerLockDocument>;
/** What `StudioSessionsRevokedDocument` describes, as the gateway renders it. */
export type StudioSessionsRevokedDocument = z.output<typeof StudioSessionsRevokedDocument>;

/** The players, as a list document. */
export const playerList = (r: ReplyOf<typeof AdminSearchPlayers>) =>
  r.players.map((p) => ({
    type: 'player' as const,
    id: p.playerId,
    attributes: { email: p.email, is_anonymous: p.isAnonymous, created_at: p.createdAt, locked_at: p.lockedAt },
  }));

/** A studio chest grant: the chests granted under its reference, and whether it was a replay. */
export function studioChestGrantDocument(r: ReplyOf<typeof AdminGrantChests>, reference: string): z.output<typeof StudioChestGrantDocument> {
  return {
    data: { type: 'chest_grant', id: reference, attributes: { chest_type: r.chestType, quantity: r.chests.length, chests: r.chests } },
    meta: { replayed: r.replayed, player_id: r.playerId },
  };
}

/** The sessions of a player the studio ended. */
export function sessionsRevokedDocument(r: ReplyOf<typeof AdminRevokeSessions>): z.output<typeof StudioSessionsRevokedDocument> {
  return {
    data: { type: 'session_revocation', id: r.playerId, attributes: { revoked_sessions: r.revokedSessions } },
  };
}

/** A player's lock after the studio locked or unlocked them. */
export function playerLockDocument(r: ReplyOf<typeof AdminLockPlayer>): z.output<typeof StudioPlayerLockDocument> {
  return {
    data: { type: 'player', id: r.playerId, attributes: { locked: r.lockedAt !== null, locked_at: r.lockedAt } },
    meta: { changed: r.changed },
  };
}

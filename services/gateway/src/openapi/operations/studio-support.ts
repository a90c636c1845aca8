import { z } from 'zod';
import {
  AdminPlayerListDocument,
  StudioChestGrantDocument,
  StudioPlayerLockDocument,
  StudioSessionsRevokedDocument,
} from '../../resources/studio-support.js';
import type { OperationDoc } from '../route-doc.js';
import { INVALID_ID, NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of the support desk's admin routes (docs/operations.md, "Admin API"). */

const PLAYER_ID = { id: { schema: z.string().uuid(), description: 'The player id (UUID).', example: '0b7d6a4e-2f5c-4f1e-9a51-3c2d1e0f9a8b' } };
const NO_SUCH_PLAYER = ["no such player in this app (`player_not_found`); another app's players are never found"];
const NOTE_ONLY =
  'The body is optional: none, or `{"meta": {"note": "…"}}` (1 to 500 characters), kept with the action in the audit log; anything else is refused.';
const NOTE_ERRORS = ['a body other than `{"meta": {"note": "…"}}`, or a note empty or longer than 500 characters (`invalid_field`)'];

/** GET /api/v1/admin/players. */
export const adminListPlayers: OperationDoc = {
  operationId: 'adminListPlayers',
  tag: 'Admin',
  summary: 'The newest players',
  description:
    "The secret key's app's players, the newest first, a page at a time, each with whether the studio locked them. A read: not recorded in the audit log. Never cached.",
  token: 'none',
  responses: [{ status: 200, description: 'A page of players.', schema: AdminPlayerListDocument, headers: NO_STORE_HEADER }],
  errors: SECRET_KEY_ONLY,
};

/** POST /api/v1/admin/players/search. */
export const adminSearchPlayers: OperationDoc = {
  operationId: 'adminSearchPlayers',
  tag: 'Admin',
  summary: 'Find players by the start of their email',
  description:
    "The players of the secret key's app whose email starts with `email_prefix`, in any case, ordered by email, a page at a time (`page[limit]`, `page[offset]` in the query). The prefix travels in the body, so an email is never in a URL (nor in a log of URLs). A read: not recorded in the audit log. Never cached.",
  token: 'none',
  bodyExample: { data: { type: 'player_search', attributes: { email_prefix: 'ada@' } } },
  responses: [
    { status: 200, description: 'A page of the players found (none: an empty list).', schema: AdminPlayerListDocument, headers: NO_STORE_HEADER },
  ],
  errors: {
    ...SECRET_KEY_ONLY,
    422: [
      'a body that is not `{data: {type: "player_search", attributes: {email_prefix}}}`, or a prefix empty or longer than 320 characters (`invalid_field`)',
    ],
  },
};

/** POST /api/v1/admin/players/{id}/chests. */
export const adminGrantChests: OperationDoc = {
  operationId: 'adminGrantChests',
  tag: 'Admin',
  summary: 'Grant chests to a player',
  description:
    "Gives a player `quantity` chests of a type of the app's current content (compensation, an event prize), as `npm run admin -- grant-chests` does: each reaches the inventory within moments, or the overflow mailbox when it is full. " +
    "Once per `reference`: the chests' ids are derived from it, so the same reference with the same chest type and quantity answers 200 with the same chests and `meta.replayed: true`, adding nothing; with another chest type or quantity 409 `reference_reused`. " +
    'Recorded in the audit log with `meta.note`. Never cached.',
  token: 'none',
  params: PLAYER_ID,
  bodyExample: {
    data: { type: 'chest_grant', attributes: { chest_type: 'silver-chest', quantity: 2, reference: 'incident-4711' } },
    meta: { note: 'Ticket 4711: chests lost in the outage' },
  },
  responses: [
    { status: 201, description: 'Granted: the chests, on their way to the inventory.', schema: StudioChestGrantDocument, headers: NO_STORE_HEADER },
    {
      status: 200,
      description: 'This reference granted these chests before: nothing added, the same chests again.',
      schema: StudioChestGrantDocument,
      headers: NO_STORE_HEADER,
    },
  ],
  errors: {
    400: [INVALID_ID],
    ...SECRET_KEY_ONLY,
    404: NO_SUCH_PLAYER,
    409: ['the reference granted this player another chest type or quantity (`reference_reused`)'],
    422: [
      'a body that is not `{data: {type: "chest_grant", attributes: {chest_type, quantity?, reference}}, meta?: {note}}`, a quantity outside 1 to 100, a reference that is not 1 to 100 printable ASCII characters, or an unknown attribute (`invalid_field`)',
      "a chest type the app's current content does not have (`chest_type_not_found`)",
    ],
  },
};

/** POST /api/v1/admin/players/{id}/sessions/revoke. */
export const adminRevokeSessions: OperationDoc = {
  operationId: 'adminRevokeSessions',
  tag: 'Admin',
  summary: 'End every session of a player',
  description:
    'Revokes every refresh-token family of the player: no refresh token of theirs works any more (401 `refresh_token_revoked`), and they must log in again. ' +
    'Access tokens already issued live until they expire (`access_token_ttl_seconds`, 15 minutes by default): to stop those at once, lock the player. ' +
    `${NOTE_ONLY} Recorded in the audit log. Never cached.`,
  token: 'none',
  params: PLAYER_ID,
  bodyExample: { meta: { note: 'Ticket 4712: phone stolen' } },
  responses: [{ status: 200, description: 'Every session ended.', schema: StudioSessionsRevokedDocument, headers: NO_STORE_HEADER }],
  errors: { 400: [INVALID_ID], ...SECRET_KEY_ONLY, 404: NO_SUCH_PLAYER, 422: NOTE_ERRORS },
};

/** POST /api/v1/admin/players/{id}/lock. */
export const adminLockPlayer: OperationDoc = {
  operationId: 'adminLockPlayer',
  tag: 'Admin',
  summary: 'Lock a player',
  description:
    'Locks the player out: every request with their access token answers 403 `player_locked`, reads and writes alike, from the request after this answer on every gateway; login and refresh answer 403 `player_locked`. Their sessions are kept, so unlocking lets them refresh again. ' +
    `Locking a locked player changes nothing (\`meta.changed: false\`). ${NOTE_ONLY} Recorded in the audit log. Never cached.`,
  token: 'none',
  params: PLAYER_ID,
  bodyExample: { meta: { note: 'Ticket 4713: chargeback fraud under review' } },
  responses: [{ status: 200, description: 'The player is locked.', schema: StudioPlayerLockDocument, headers: NO_STORE_HEADER }],
  errors: { 400: [INVALID_ID], ...SECRET_KEY_ONLY, 404: NO_SUCH_PLAYER, 422: NOTE_ERRORS },
};

/** POST /api/v1/admin/players/{id}/unlock. */
export const adminUnlockPlayer: OperationDoc = {
  operationId: 'adminUnlockPlayer',
  tag: 'Admin',
  summary: 'Unlock a player',
  description:
    "Lifts a lock: the player's tokens work again from the request after this answer, on every gateway, and they may log in and refresh. " +
    `Unlocking a player who is not locked changes nothing (\`meta.changed: false\`). ${NOTE_ONLY} Recorded in the audit log. Never cached.`,
  token: 'none',
  params: PLAYER_ID,
  bodyExample: { meta: { note: 'Ticket 4713: review closed' } },
  responses: [{ status: 200, description: 'The player is not locked.', schema: StudioPlayerLockDocument, headers: NO_STORE_HEADER }],
  errors: { 400: [INVALID_ID], ...SECRET_KEY_ONLY, 404: NO_SUCH_PLAYER, 422: NOTE_ERRORS },
};

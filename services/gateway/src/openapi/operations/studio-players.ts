import { z } from 'zod';
import { StudioPlayerProfileDocument } from '../../resources/studio-players.js';
import type { OperationDoc } from '../route-doc.js';
import { INVALID_ID, NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of the studio's changes of a player's declared profile (docs/content.md, "Compliance"). */

/** PATCH /api/v1/admin/players/{id}. */
export const adminUpdatePlayer: OperationDoc = {
  operationId: 'adminUpdatePlayer',
  tag: 'Admin',
  summary: "Correct a player's declared country or birth year",
  description:
    "Sets a player's declared `country` (ISO 3166-1 alpha-2, any case) and `birth_year`, or clears one with `null`; an attribute left out stays as it is. " +
    'A player cannot change a country declared in a blocked region, changes another at most once per `COUNTRY_CHANGE_COOLDOWN_DAYS`, and may only move a birth year later: the studio corrects what they cannot. ' +
    "The studio's change does not start the player's cooldown. Recorded in the audit log, with `meta.note` when given. Never cached.",
  token: 'none',
  params: { id: { schema: z.string().uuid(), description: 'The player id (UUID).', example: '0b7d6a4e-2f5c-4f1e-9a51-3c2d1e0f9a8b' } },
  bodyExample: { data: { type: 'player', attributes: { country: 'DE', birth_year: 1990 } }, meta: { note: 'Ticket 4714: moved to Germany' } },
  responses: [
    { status: 200, description: "Changed: the player's declared profile now.", schema: StudioPlayerProfileDocument, headers: NO_STORE_HEADER },
  ],
  errors: {
    400: [INVALID_ID],
    ...SECRET_KEY_ONLY,
    404: ["no such player in this app (`player_not_found`); another app's players are never found"],
    422: [
      'a body that is not `{data: {type: "player", attributes: {country?, birth_year?}}, meta?: {note}}`, a note empty or longer than 500 characters, or an unknown attribute (`invalid_field`)',
      'a country that is not an assigned ISO 3166-1 alpha-2 code (`country_invalid`), a birth year before 1900 or after this year (`birth_year_invalid`)',
    ],
  },
};

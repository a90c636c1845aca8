import { z } from 'zod';
import { PrivacySchema, UuidSchema } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { InventoryChest } from './chests.js';
import { Count, identifierOf, NoRelationships, ResourceLinks, Timestamp } from './jsonapi.js';

/** Response schemas of registration, sessions, the calling player and friends. */

/** The player's canonical URL, which only the player may read and update (as `/players/me`). */
const PlayerLinks = ResourceLinks.describe('`self`: `/api/v1/players/{id}`, which answers and updates this player as `/api/v1/players/me` does.');

const Email = z.string().nullable().describe('Null for guests (anonymous players).');
const ChestRefs = z.object({ data: z.array(identifierOf('chest')) });
/** A player's unopened chests, or that the chests service could not be asked just now. */
const ChestsRelationship = z.union([ChestRefs, z.object({ meta: z.object({ available: z.literal(false) }) })]);

/** The player as registration, login, refresh and guest creation show it. */
export const SessionPlayer = component(
  'SessionPlayer',
  'The player of a session. `relationships.chests` holds the starter chest on registration and guest creation; on login and refresh the unopened chests (the first 100, as `/players/me` lists them; the whole inventory is at `/players/me/chests`), or `meta.available: false` when the chests service cannot be reached (the sign-in still succeeds).',
  z.object({
    type: z.literal('player'),
    id: UuidSchema,
    attributes: z.object({ email: Email, is_anonymous: z.boolean() }),
    relationships: z.object({ chests: ChestsRelationship }),
    links: PlayerLinks,
  }),
);

const Amounts = z.record(z.string(), z.number().int().min(0));

const TokenMeta = {
  access_token: z.string().describe('JWT (ES256) for `Authorization: Bearer`.'),
  refresh_token: z.string().describe('Opaque; works once: every refresh rotates it, and reusing an old one revokes the session.'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().positive().describe('Lifetime of the access token, in seconds.'),
  created_at: Timestamp.describe("The player's creation time."),
  player_type: z.enum(['registered', 'anonymous']),
};

/** Registration and guest creation: tokens and what was granted. */
export const RegistrationDocument = component(
  'RegistrationDocument',
  'A new player (or an upgraded guest) with tokens and grants. The balances after registration are `initial_currency` plus `welcome_bonus`; an upgraded guest got its initial currency when it was created and is not granted it twice.',
  z.object({
    data: SessionPlayer,
    included: z.array(z.never()).max(0).describe('Always empty.'),
    meta: z.object({
      ...TokenMeta,
      initial_currency: Amounts.describe('By currency code.'),
      welcome_bonus: z
        .object({ starter_chest: UuidSchema.describe('Inventory id of the starter chest, openable at once.') })
        .catchall(z.number().int().min(0))
        .describe('Amounts by currency code, and the starter chest.'),
    }),
  }),
);

/** Login and refresh: the player and new tokens. */
export const SessionDocument = component(
  'SessionDocument',
  'The player and a new pair of tokens.',
  z.object({ data: SessionPlayer, included: z.array(z.never()).max(0).describe('Always empty.'), meta: z.object(TokenMeta) }),
);

/** The calling player. */
export const MePlayer = component(
  'MePlayer',
  'The calling player. `relationships.chests` lists the unopened chests; when the chests service cannot be reached it carries `meta.available: false` instead.',
  z.object({
    type: z.literal('player'),
    id: UuidSchema,
    attributes: z.object({
      email: Email,
      is_anonymous: z.boolean(),
      privacy: PrivacySchema.describe('Who may see the inventory: everyone (counts only), nobody else, or confirmed friends.'),
      experience: Count,
      country: z
        .string()
        .regex(/^[A-Z]{2}$/)
        .nullable()
        .describe('ISO 3166-1 alpha-2 country the player declared (upper case); null until given. Shown to the player alone.'),
      birth_year: z.number().int().nullable().describe('Birth year the player declared; null until given. Shown to the player alone.'),
      created_at: Timestamp,
    }),
    relationships: z.object({ chests: ChestsRelationship }),
    links: PlayerLinks,
  }),
);

/** GET and PATCH /players/me. */
export const MeDocument = component(
  'MeDocument',
  'The calling player; `included` holds the unopened chests with `include=chests` (else it is empty).',
  z.object({ data: MePlayer, included: z.array(InventoryChest) }),
);

/** Another player in the caller's friend list. */
export const Friend = component(
  'Friend',
  "A friendship as the calling player sees it. Only the relation is shown, never the other player's email.",
  z.object({
    type: z.literal('player'),
    id: UuidSchema,
    attributes: z.object({ is_anonymous: z.boolean() }),
    relationships: NoRelationships,
    meta: z.object({
      status: z.enum(['confirmed', 'pending_outgoing', 'pending_incoming']),
      since: Timestamp.describe("When the caller's side (or, if none, the other side) was requested."),
    }),
  }),
);

/** One friendship. */
export const FriendDocument = component('FriendDocument', 'The friendship after the request.', z.object({ data: Friend }));

/** Friends and pending requests. */
export const FriendListDocument = component(
  'FriendListDocument',
  "The calling player's friends and pending requests.",
  z.object({ data: z.array(Friend), meta: z.object({ total_count: Count }) }),
);

/** What `Friend` describes, as the gateway renders it. */
export type Friend = z.output<typeof Friend>;
/** What `FriendDocument` describes, as the gateway renders it. */
export type FriendDocument = z.output<typeof FriendDocument>;
/** What `FriendListDocument` describes, as the gateway renders it. */
export type FriendListDocument = z.output<typeof FriendListDocument>;
/** What `MePlayer` describes, as the gateway renders it. */
export type MePlayer = z.output<typeof MePlayer>;
/** What `RegistrationDocument` describes, as the gateway renders it. */
export type RegistrationDocument = z.output<typeof RegistrationDocument>;
/** What `SessionDocument` describes, as the gateway renders it. */
export type SessionDocument = z.output<typeof SessionDocument>;
/** What `SessionPlayer` describes, as the gateway renders it. */
export type SessionPlayer = z.output<typeof SessionPlayer>;

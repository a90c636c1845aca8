import { z } from 'zod';
import { PrivacySchema, UuidSchema, type FriendView, type PlayerView, type Session } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { selfLinks } from '../routes/v1/resource-links.js';
import { InventoryChest } from './chests.js';
import { Count, fieldsOf, identifierOf, NoRelationships, ResourceLinks, sparse, Timestamp } from './jsonapi.js';

/**
 * The player resource (type `player`) as registration, sessions, `/players/me` and friend lists
 * show it: response schemas, the documents that hold them, and the functions that render them,
 * typed by those schemas. Session and `/players/me` answers take `fields[player]`: their documented
 * attributes and relationships are all optional (`sparse`); the renderers are typed by the
 * complete resources.
 */

/** The player's canonical URL, which only the player may read and update (as `/players/me`). */
const PlayerLinks = ResourceLinks.describe('`self`: `/api/v1/players/{id}`, which answers and updates this player as `/api/v1/players/me` does.');

const Email = z.string().nullable().describe('Null for guests (anonymous players).');
const ChestRefs = z.object({ data: z.array(identifierOf('chest')) });
/** A player's unopened chests, or that the chests service could not be asked just now. */
const ChestsRelationship = z.union([ChestRefs, z.object({ meta: z.object({ available: z.literal(false) }) })]);

const SessionAttributes = z.object({ email: Email, is_anonymous: z.boolean() });
const PlayerRelationships = z.object({ chests: ChestsRelationship });

/** Fields a client may select with `fields[player]` on a session's answer. */
export const SESSION_PLAYER_FIELDS = ['id', ...fieldsOf(SessionAttributes)];

/** The player as registration, login, refresh and guest creation show it, as rendered. */
const RenderedSessionPlayer = z.object({
  type: z.literal('player'),
  id: UuidSchema,
  attributes: SessionAttributes,
  relationships: PlayerRelationships,
  links: PlayerLinks,
});

/** The player of a session, as documented: `fields[player]` may leave members out. */
export const SessionPlayer = component(
  'SessionPlayer',
  'The player of a session. `relationships.chests` holds the starter chest on registration and guest creation; on login and refresh the unopened chests (the first 100, as `/players/me` lists them; the whole inventory is at `/players/me/chests`), or `meta.available: false` when the chests service cannot be reached (the sign-in still succeeds).',
  RenderedSessionPlayer.extend({ attributes: sparse('player', SessionAttributes), relationships: sparse('player', PlayerRelationships) }),
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

const MeAttributes = z.object({
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
});

/** Fields a client may select with `fields[player]` on `/players/me`. */
export const ME_PLAYER_FIELDS = ['id', ...fieldsOf(MeAttributes), ...fieldsOf(PlayerRelationships)];

/** The calling player, as rendered. */
const RenderedMePlayer = z.object({
  type: z.literal('player'),
  id: UuidSchema,
  attributes: MeAttributes,
  relationships: PlayerRelationships,
  links: PlayerLinks,
});

/** The calling player, as documented: `fields[player]` may leave members out. */
export const MePlayer = component(
  'MePlayer',
  'The calling player. `relationships.chests` lists the unopened chests; when the chests service cannot be reached it carries `meta.available: false` instead.',
  RenderedMePlayer.extend({ attributes: sparse('player', MeAttributes), relationships: sparse('player', PlayerRelationships) }),
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

/** What `FriendDocument` describes, as the gateway renders it. */
export type FriendDocument = z.output<typeof FriendDocument>;
/** What `FriendListDocument` describes, as the gateway renders it. */
export type FriendListDocument = z.output<typeof FriendListDocument>;
/** What `RegistrationDocument` describes, as the gateway renders it. */
export type RegistrationDocument = z.output<typeof RegistrationDocument>;
/** What `SessionDocument` describes, as the gateway renders it. */
export type SessionDocument = z.output<typeof SessionDocument>;

/**
 * The player as registration, login and refresh show it (the spec's attributes), with references
 * to the unopened chests: the starter chest on registration and guest creation (what was just
 * granted), else `chests` as the inventory lists them (its first page), or `meta.available: false`
 * when the chests service could not be asked. Its self link is the player's canonical URL.
 */
export function sessionPlayerResource(s: Session, base: string, chests?: { type: 'chest'; id: string }[]): z.output<typeof RenderedSessionPlayer> {
  return {
    type: 'player',
    id: s.player.id,
    attributes: { email: s.player.email, is_anonymous: s.player.isAnonymous },
    relationships: { chests: chestsRelationship(s.grants ? [{ type: 'chest', id: s.grants.starterChestId }] : chests) },
    links: selfLinks.player(base, s.player.id),
  };
}

/** A player's `relationships.chests`: the references, or that they could not be read now. */
function chestsRelationship(chests: { type: 'chest'; id: string }[] | undefined) {
  return chests ? { data: chests.map((c) => ({ type: c.type, id: c.id })) } : { meta: { available: false as const } };
}

/** A session document's meta; registration's (and a guest's creation's) adds what was granted. */
type SessionMeta = SessionDocument['meta'] & Partial<Pick<RegistrationDocument['meta'], 'initial_currency' | 'welcome_bonus'>>;

/** Token meta of a session; registration and guest creation add what was granted. */
export function sessionMeta(s: Session): SessionMeta {
  const meta: SessionMeta = {
    access_token: s.accessToken,
    refresh_token: s.refreshToken,
    token_type: s.tokenType,
    expires_in: s.expiresIn,
    created_at: s.player.createdAt,
    player_type: s.playerType,
  };
  if (s.grants) {
    meta.initial_currency = s.grants.initialCurrency;
    // Amounts by currency code and the starter chest's id: the schema's `catchall` of integers
    // beside one string member, which the generated type writes as an intersection that only
    // Object.assign's own intersection type meets (a spread is checked member by member).
    meta.welcome_bonus = Object.assign({}, s.grants.welcomeBonus, { starter_chest: s.grants.starterChestId });
  }
  return meta;
}

/**
 * The calling player on /players/me, with references to their unopened chests; when the chests
 * could not be read, the relationship carries `meta.available: false` instead of data. Country
 * and birth year are shown here only, to the player themselves (never to friends or others). Its
 * self link is the player's canonical URL, `/players/{id}`, which answers as `/players/me` does.
 */
export function mePlayerResource(
  p: PlayerView,
  base: string,
  chests: { type: 'chest'; id: string }[] | undefined,
): z.output<typeof RenderedMePlayer> {
  return {
    type: 'player',
    id: p.id,
    attributes: {
      email: p.email,
      is_anonymous: p.isAnonymous,
      privacy: p.privacy,
      experience: p.experience,
      country: p.country,
      birth_year: p.birthYear,
      created_at: p.createdAt,
    },
    relationships: { chests: chestsRelationship(chests) },
    links: selfLinks.player(base, p.id),
  };
}

/**
 * Another player in the caller's friend list; only the relation is shown, never their email. No
 * self link: the player's URL answers that player alone (403 to anyone else).
 */
export function friendResource(f: FriendView): z.output<typeof Friend> {
  return {
    type: 'player',
    id: f.playerId,
    attributes: { is_anonymous: f.isAnonymous },
    relationships: {},
    meta: { status: f.status, since: f.since },
  };
}

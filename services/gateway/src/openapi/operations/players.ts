import { z } from 'zod';
import { FriendDocument, FriendListDocument, MeDocument, RegistrationDocument, SessionDocument } from '../../resources/players.js';
import { variantOf, type OperationDoc } from '../route-doc.js';
import { ALIAS_NOTE, INVALID_ID, INVALID_IDEMPOTENCY_KEY, REPLAYED_HEADER, uuidParam } from './common.js';

/** Documentation of registration, sessions, guests, the calling player and friends. */

const password = 'Str0ng!pass';

/** POST /api/v1/players/register. */
export const register: OperationDoc = {
  operationId: 'registerPlayer',
  tag: 'Players',
  summary: 'Register a player',
  description:
    'Creates a registered player with tokens, the initial currency and the welcome bonus, whose `starter_chest` is the inventory id of the chest now owned. ' +
    "Sent with an anonymous player's Bearer token, upgrades that guest in place (same id, chests and collection kept). " +
    'Passwords need 8+ characters with a lowercase and an uppercase letter, a digit and one of `! @ # $ % ^ & *`. ' +
    'Optional `country` (ISO 3166-1 alpha-2, either case) and `birth_year` feed the compliance rules of paid purchases; they can also be given later with `PATCH /players/me`.',
  token: 'optional',
  passwordQueue: true,
  headers: {
    'Idempotency-Key': {
      schema: z.string().regex(/^[\x21-\x7e]{1,255}$/),
      description:
        'Makes a retry safe: a registration retried with the same key (per app), email, password and Bearer token within `IDEMPOTENCY_KEY_TTL_HOURS` (24 by default) answers like the first ' +
        '(201, the same player and grants, new tokens) with `idempotent-replayed: true`, instead of `email_taken`. 1 to 255 printable ASCII characters.',
      example: 'signup-6f1c2a',
    },
  },
  bodyExample: {
    data: {
      type: 'player',
      attributes: { email: 'ada@example.com', password, password_confirmation: password, country: 'DE', birth_year: 1990 },
      relationships: {},
    },
  },
  responses: [
    { status: 201, description: 'Registered (or upgraded): the player, tokens and grants.', schema: RegistrationDocument, headers: REPLAYED_HEADER },
  ],
  errors: {
    400: [INVALID_IDEMPOTENCY_KEY],
    401: ['a Bearer token whose player no longer exists (`invalid_token`)'],
    403: [
      "an upgraded guest's declared profile follows a player's rules (see `PATCH /players/me`): `country_locked`, `country_change_too_soon` (`meta.retry_after`), `birth_year_locked`",
    ],
    409: [
      'the email is already registered in this app (`email_taken`)',
      'the token is of a player who is already registered (`already_registered`)',
      'the Idempotency-Key was used with another email, password or token (`idempotency_key_reused`)',
    ],
    422: [
      'one error per failing rule, pointing at its member: `email_blank`, `email_whitespace`, `email_at_sign`, `email_domain`, `email_too_long`, `password_too_short`, `password_too_long`, `password_lowercase`, `password_uppercase`, `password_digit`, `password_special`, `password_confirmation_mismatch`',
      'a `country` that is not an assigned ISO 3166-1 alpha-2 code (`country_invalid`), a `birth_year` before 1900 or after the current year (`birth_year_invalid`)',
    ],
  },
};

/** POST /api/v1/players/login. */
export const login: OperationDoc = {
  operationId: 'login',
  tag: 'Players',
  summary: 'Log in',
  description: 'Answers like registration, without the grants. A wrong email or password gets one generic 401 (no account enumeration).',
  token: 'none',
  passwordQueue: true,
  bodyExample: { data: { type: 'player', attributes: { email: 'ada@example.com', password } } },
  responses: [{ status: 200, description: 'Logged in: the player and new tokens.', schema: SessionDocument }],
  errors: {
    401: ['a wrong email or password (`invalid_credentials`)'],
    403: ['the right email and password of a player the studio locked (`player_locked`)'],
  },
};

/** POST /api/v1/players/refresh. */
export const refresh: OperationDoc = {
  operationId: 'refreshSession',
  tag: 'Players',
  summary: 'Refresh the tokens',
  description:
    'Exchanges a refresh token for a new access token and a new refresh token. Each refresh token works once; presenting a used one again revokes its whole session family.',
  token: 'none',
  bodyExample: { data: { type: 'session', attributes: { refresh_token: '<refresh token>' } } },
  responses: [{ status: 200, description: 'The player and a new pair of tokens.', schema: SessionDocument }],
  errors: {
    401: [
      'an unknown refresh token (`invalid_refresh_token`), an expired one (`refresh_token_expired`), one of an ended session (`refresh_token_revoked`)',
      'a refresh token already used once: the session family is revoked (`refresh_token_reused`)',
    ],
    403: ['a refresh token of a player the studio locked (`player_locked`); unlocked, the session refreshes again'],
  },
};

/** POST /api/v1/players/anonymous. */
export const createGuest: OperationDoc = {
  operationId: 'createGuest',
  tag: 'Players',
  summary: 'Create a guest',
  description:
    'Creates an anonymous player (`is_anonymous: true`, `player_type: anonymous`) with tokens, the initial currency and a starter chest. No body is needed. Registering later with its token upgrades it.',
  token: 'none',
  headers: {
    'Idempotency-Key': {
      schema: z.string().regex(/^[\x21-\x7e]{1,255}$/),
      description:
        'Makes a retry safe: a creation retried with the same key (per app) within `IDEMPOTENCY_KEY_TTL_HOURS` (24 by default), while the player is still a guest, answers like the first ' +
        '(201, the same guest and grants, new tokens) with `idempotent-replayed: true`. Within that window the key signs in as that guest, so keep it as privately as the refresh token. ' +
        '1 to 255 printable ASCII characters.',
      example: 'guest-0b7d41',
    },
  },
  responses: [{ status: 201, description: 'The guest, its tokens and grants.', schema: RegistrationDocument, headers: REPLAYED_HEADER }],
  errors: {
    400: [INVALID_IDEMPOTENCY_KEY],
    409: ['the guest made with this Idempotency-Key has since registered (`idempotency_key_reused`)'],
  },
};

/** POST /api/v1/players/logout. */
export const logout: OperationDoc = {
  operationId: 'logout',
  tag: 'Players',
  summary: 'Log out',
  description:
    "Revokes the refresh tokens of the access token's session, and of `refresh_token` when a body names one. The access token stays valid until it expires, as JWTs do. The body is optional.",
  token: 'required',
  bodyExample: { data: { type: 'session', attributes: { refresh_token: '<refresh token>' } } },
  responses: [{ status: 204, description: 'Logged out.' }],
};

/** GET /api/v1/players/me. */
export const getMe: OperationDoc = {
  operationId: 'getMe',
  tag: 'Players',
  summary: 'The calling player',
  description:
    'The calling player with privacy, experience, the declared `country` and `birth_year` (null until given; only the player sees them) and references to their unopened chests; `include=chests` adds the chests. ' +
    'If the chests service is down, the player is still shown (the relationship says so), unless `include=chests` was asked.',
  token: 'required',
  responses: [{ status: 200, description: 'The calling player.', schema: MeDocument }],
  errors: { 404: ['the player of the token no longer exists (`player_not_found`)'] },
};

/** PATCH /api/v1/players/me. */
export const updateMe: OperationDoc = {
  operationId: 'updateMe',
  tag: 'Players',
  summary: 'Change privacy, country or birth year',
  description:
    'Changes the attributes given (at least one): `privacy`, who may see the inventory: `public` (counts only), `private` (nobody else) or `friends` (confirmed friends see the chests); ' +
    '`country` (ISO 3166-1 alpha-2, either case, stored upper case) and `birth_year`, which the compliance rules of paid purchases read. ' +
    'A declared profile cannot be gamed: the first country is free; a country declared in a region where paid random items are blocked cannot change (`country_locked`); any other changes at most once per `COUNTRY_CHANGE_COOLDOWN_DAYS` (30 by default; `country_change_too_soon`, `meta.retry_after` the ISO 8601 moment from which it may). ' +
    'A birth year may move later, never earlier (`birth_year_locked`). Sending the values already declared is fine; a refusal changes nothing. The studio corrects them with `PATCH /api/v1/admin/players/{id}`. Nothing else can change.',
  token: 'required',
  bodyExample: { data: { type: 'player', attributes: { privacy: 'friends', country: 'DE', birth_year: 1990 } } },
  responses: [{ status: 200, description: 'The updated player.', schema: MeDocument }],
  errors: {
    403: [
      'the declared country is in a blocked region (`country_locked`)',
      'the declared country changed less than `COUNTRY_CHANGE_COOLDOWN_DAYS` ago (`country_change_too_soon`, `meta.retry_after`: ISO 8601 UTC)',
      'a birth year earlier than the one declared (`birth_year_locked`)',
    ],
    404: ['the player of the token no longer exists (`player_not_found`)'],
    409: ['`data.id` is not the calling player (`id_mismatch`)'],
    422: [
      'no attribute given, or one that cannot change',
      'a `country` that is not an assigned ISO 3166-1 alpha-2 code (`country_invalid`), a `birth_year` before 1900 or after the current year (`birth_year_invalid`)',
    ],
  },
};

/** A `/players/{id}` that names another player than the caller. */
const NOT_OWN_PLAYER =
  "`{id}` is not the caller's own id (`player_not_found`): a player reads and changes only themselves, and another player's id is answered as an unknown one";

/** What the canonical URL adds to the operation at `/players/me`. */
const CANONICAL_NOTE =
  "The player's canonical URL, the `links.self` of the player resource: with the caller's own id (any case) it answers exactly as `/players/me` does.";

/** GET /api/v1/players/{id}. */
export const getPlayer: OperationDoc = {
  ...variantOf(getMe, 'getPlayer', CANONICAL_NOTE),
  summary: 'The calling player, at its canonical URL',
  params: { id: uuidParam("The calling player's own id.") },
  errors: { ...getMe.errors, 400: [INVALID_ID], 404: [NOT_OWN_PLAYER, ...(getMe.errors?.[404] ?? [])] },
};

/** PATCH /api/v1/players/{id}. */
export const updatePlayer: OperationDoc = {
  ...variantOf(updateMe, 'updatePlayer', CANONICAL_NOTE),
  summary: 'Change privacy, country or birth year, at the canonical URL',
  params: { id: uuidParam("The calling player's own id.") },
  bodyExample: { data: { type: 'player', id: '3f2b6c1e-8a4d-4f7b-9c2e-5d1a0b7e6f43', attributes: { privacy: 'friends' } } },
  errors: { ...updateMe.errors, 400: [INVALID_ID], 404: [NOT_OWN_PLAYER, ...(updateMe.errors?.[404] ?? [])] },
};

/** POST /api/v1/players/me/friends. */
export const addFriend: OperationDoc = {
  operationId: 'addFriend',
  tag: 'Friends',
  summary: 'Send or confirm a friend request',
  description: 'Sends a friend request to another player of the app; when that player has requested the caller already, the friendship is confirmed.',
  token: 'required',
  bodyExample: { data: { type: 'player', id: '3f2b6c1e-8a4d-4f7b-9c2e-5d1a0b7e6f43' } },
  responses: [
    { status: 201, description: 'Requested or confirmed: `meta.status` says which.', schema: FriendDocument },
    { status: 200, description: 'The relation existed already; unchanged.', schema: FriendDocument },
  ],
  errors: {
    404: ['no such player in this app (`player_not_found`)'],
    409: ['the friendship changed during the request (`friendship_changed`): retry'],
    422: ['the caller themselves (`cannot_befriend_self`)'],
  },
};

/** GET /api/v1/players/me/friends. */
export const listFriends: OperationDoc = {
  operationId: 'listFriends',
  tag: 'Friends',
  summary: 'Friends and pending requests',
  token: 'required',
  responses: [{ status: 200, description: "The caller's friendships, each with its status.", schema: FriendListDocument }],
};

/** DELETE /api/v1/players/me/friends/{id}. */
export const removeFriend: OperationDoc = {
  operationId: 'removeFriend',
  tag: 'Friends',
  summary: 'Remove a friend or a request',
  description: 'Ends a friendship or a pending request, in both directions; answers 204 also when there was none.',
  token: 'required',
  params: { id: uuidParam('The other player.') },
  responses: [{ status: 204, description: 'Removed.' }],
  errors: { 400: [INVALID_ID], 404: ['no such player in this app (`player_not_found`)'] },
};

/** POST /players/login (the spec's unprefixed path). */
export const loginAlias = variantOf(login, 'loginAlias', ALIAS_NOTE);

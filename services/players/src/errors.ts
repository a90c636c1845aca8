import { AppError } from '@ccs/shared';

/** The players service's domain errors, with the stable codes clients and other services see. */
export const playerErrors = {
  appNotFound: () => AppError.notFound('app_not_found', 'The app does not exist.'),
  noApp: (appId: string) => AppError.notFound('app_not_found', `No app ${appId}.`),
  contentVersionNotFound: (appId: string, version: number) =>
    AppError.notFound('content_version_not_found', `App ${appId} has no stored content version ${version}.`, { parameter: 'version' }),
  invalidContent: (reason: string) => AppError.unprocessable('invalid_content', `The content file cannot be loaded: ${reason}`),
  apiKeyNotFound: () => AppError.notFound('api_key_not_found', 'The API key is not known.'),
  /** The admin API's player (path `{id}`). */
  playerNotFound: () => AppError.notFound('player_not_found', 'No such player in this app.', { parameter: 'id' }),
  /** The admin lookup by id or email. */
  appHasNoSuchPlayer: () => AppError.notFound('player_not_found', 'The app has no such player.'),
  /** The caller's own player, named by the access token. */
  tokenPlayerNotFound: () => AppError.notFound('player_not_found', 'The player of this token does not exist in this app.'),
  /** Another player named by the path's `{id}`. */
  noPlayerWithId: () => AppError.notFound('player_not_found', 'No player with this id in this app.', { parameter: 'id' }),
  /** Another player named by the document's `data.id`. */
  unknownFriend: () => AppError.notFound('player_not_found', 'No player with this id in this app.', { pointer: '/data/id' }),
  cannotBefriendSelf: () => AppError.unprocessable('cannot_befriend_self', 'You cannot send a friend request to yourself.', { pointer: '/data/id' }),
  friendshipChanged: () => AppError.conflict('friendship_changed', 'The friendship changed while it was being created; retry.'),
  emailTaken: () => AppError.conflict('email_taken', 'An account with this email already exists.', { pointer: '/data/attributes/email' }),
  alreadyRegistered: () => AppError.conflict('already_registered', 'This player is already registered; log in instead.'),
  registrationKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key for a new request.', {
      header: 'Idempotency-Key',
    }),
  guestKeyReused: () =>
    AppError.conflict(
      'idempotency_key_reused',
      'This Idempotency-Key made a guest that has since registered; log in instead, or use a new key for a new guest.',
      { header: 'Idempotency-Key' },
    ),
  tokenNamesNoPlayer: () => AppError.unauthorized('invalid_token', 'The access token names no player of this app.'),
  invalidCredentials: () => AppError.unauthorized('invalid_credentials', 'The email or password is incorrect.'),
  invalidRefreshToken: () => AppError.unauthorized('invalid_refresh_token', 'The refresh token is not valid.'),
  refreshTokenReused: () =>
    AppError.unauthorized('refresh_token_reused', 'This refresh token was already used; the session is revoked. Log in again.'),
  refreshTokenRevoked: () => AppError.unauthorized('refresh_token_revoked', 'The session has ended. Log in again.'),
  refreshTokenExpired: () => AppError.unauthorized('refresh_token_expired', 'The refresh token has expired. Log in again.'),
  /** Login or refresh of a player the studio locked. */
  playerLocked: () =>
    new AppError({ kind: 'forbidden', code: 'player_locked', detail: "This player's account is locked by the game's studio: contact its support." }),
};

/** Refusals of a player's own change of their declared profile (profile/declared-profile.ts). */
export const profileErrors = {
  countryLocked: () =>
    new AppError({
      kind: 'forbidden',
      code: 'country_locked',
      detail: 'Your declared country is one where paid random items are not offered, so it cannot be changed here: contact support if it is wrong.',
      source: { pointer: '/data/attributes/country' },
    }),
  countryChangeTooSoon: (retryAfter: Date) =>
    new AppError({
      kind: 'forbidden',
      code: 'country_change_too_soon',
      detail: `Your declared country was changed recently; it may change again from ${retryAfter.toISOString()}.`,
      source: { pointer: '/data/attributes/country' },
      meta: { retry_after: retryAfter.toISOString() },
    }),
  birthYearLocked: () =>
    new AppError({
      kind: 'forbidden',
      code: 'birth_year_locked',
      detail: 'A declared birth year may only move later, never earlier: contact support if it is wrong.',
      source: { pointer: '/data/attributes/birth_year' },
    }),
};

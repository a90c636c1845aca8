import { AppError, WEBHOOK_DELIVERY_STATUSES } from '@ccs/shared';

/**
 * The gateway's own errors: credentials and request checks made at the edge, with the stable codes
 * clients see. HTTP protocol refusals (406, 414, 415, 429, malformed URLs and bodies) stay with the
 * plugins that make them (plugins/negotiation.ts, plugins/rate-limit.ts, plugins/errors.ts, app.ts).
 */
export const gatewayErrors = {
  missingApiKey: () => AppError.unauthorized('missing_api_key', 'Send your app key in the apikey header.'),
  invalidApiKey: () => AppError.unauthorized('invalid_api_key', 'The apikey is not valid.'),
  missingToken: () => AppError.unauthorized('missing_token', 'Send Authorization: Bearer <access token>.'),
  invalidToken: (detail: string) => AppError.unauthorized('invalid_token', detail),
  tokenExpired: () => AppError.unauthorized('token_expired', 'The access token has expired; refresh it or log in again.'),
  tokenNotAccepted: () =>
    AppError.unauthorized('token_not_accepted', "The admin API takes the app's secret key in the apikey header, and no Bearer token."),
  secretKeyRequired: () =>
    AppError.forbidden('secret_key_required', "The admin API needs the app's secret key; a publishable key is for game clients."),
  playerLocked: () =>
    AppError.forbidden('player_locked', "This player's account is locked by the game's studio: every request with its token is refused."),
  missingBody: () => AppError.badRequest('missing_body', 'This request needs a JSON body.', { pointer: '' }),
  nulCharacter: (pointer: string) => AppError.unprocessable('invalid_field', 'Text must not contain the NUL character (\\u0000).', { pointer }),
  invalidId: (name: string) => AppError.badRequest('invalid_id', `Path parameter "${name}" must be a UUID.`, { parameter: name }),
  invalidIdempotencyKey: () =>
    AppError.badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters, sent once.', {
      header: 'Idempotency-Key',
    }),
  invalidRulesVersion: () =>
    AppError.badRequest('invalid_parameter', 'rules_version must be a content version number (1 or more).', { parameter: 'rules_version' }),
  chestNotFound: () => AppError.notFound('chest_not_found', 'No such chest in this app.', { parameter: 'id' }),
  /** A banner id that is not a slug names no banner: 404, as an unknown one. */
  bannerNotFound: () => AppError.notFound('banner_not_found', 'No banner with this id.', { parameter: 'id' }),
  contentVersionNotFound: () => AppError.notFound('content_version_not_found', 'No stored content of that version.', { parameter: 'version' }),
  idMismatch: () => AppError.conflict('id_mismatch', 'data.id must be the id of the calling player.', { pointer: '/data/id' }),
  tooManyFilterValues: () => AppError.badRequest('invalid_filter', 'The filter has too many values.', { parameter: 'filter' }),
  contentNotFound: (kind: 'collection' | 'collectible') =>
    AppError.notFound(`${kind}_not_found`, `No such ${kind} in this app.`, { parameter: 'id' }),
  playerNotFound: () => AppError.notFound('player_not_found', 'No such player in this app.', { parameter: 'id' }),
  /**
   * `/players/{id}` names another player than the caller: answered as an unknown player is (the
   * gateway looks nothing up, so whether that player exists is never told).
   */
  notOwnPlayer: () =>
    AppError.notFound('player_not_found', 'No such player for this token: a player reads and changes only themselves (use your own id or me).', {
      parameter: 'id',
    }),
  webhookNotFound: () => AppError.notFound('webhook_not_found', 'No such webhook endpoint in this app.', { parameter: 'id' }),
  tradeFilter: () =>
    AppError.badRequest(
      'invalid_filter',
      'Use filter[role]=incoming|outgoing and filter[state]= one or more of offered, completed, declined, cancelled, expired.',
      { parameter: 'filter' },
    ),
  deliveryStatusFilter: () =>
    AppError.badRequest('invalid_filter', `Use filter[status]= one of ${WEBHOOK_DELIVERY_STATUSES.join(', ')}.`, { parameter: 'filter[status]' }),
  webhookDeliveryNotFound: () =>
    AppError.notFound('webhook_delivery_not_found', 'No such delivery of this webhook endpoint.', { parameter: 'delivery_id' }),
  chestTypeFilter: () =>
    AppError.badRequest('invalid_filter', 'Use filter[chest_type_id]=<chest type id> (one UUID).', { parameter: 'filter[chest_type_id]' }),
  currencyNotFound: () =>
    AppError.unprocessable('currency_not_found', 'No such currency in this app (give its code, e.g. "coins").', {
      pointer: '/data/attributes/currency',
    }),
  amountNotPositive: () => AppError.unprocessable('amount_not_positive', 'amount must be greater than zero.', { pointer: '/data/attributes/amount' }),
  amountAboveMaximum: () =>
    AppError.unprocessable('amount_above_maximum', "amount is above every currency's maximum credit.", { pointer: '/data/attributes/amount' }),
};

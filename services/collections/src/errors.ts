import { AppError } from '@ccs/shared';

/** 404 for a collection the app does not have (another app's ids included). */
export const collectionNotFound = (id: string) =>
  AppError.notFound('collection_not_found', `No collection "${id.slice(0, 100)}" in this app.`, { parameter: 'id' });

/** 404 for a collectible the app does not have (another app's ids included). */
export const collectibleNotFound = (id: string) =>
  AppError.notFound('collectible_not_found', `No collectible "${id.slice(0, 100)}" in this app.`, { parameter: 'id' });

/** 400 for a filter on a field that cannot be filtered on. */
export const unfilterableField = (field: string, filterable: readonly string[]) =>
  AppError.badRequest('invalid_filter', `Cannot filter on "${field}". Filterable: ${filterable.join(', ')}.`, { parameter: 'filter' });

/** Refusals of trading and dissolving (docs/content.md, "Trading"). Nothing is charged or moved by any of them. */
export const tradeErrors = {
  disabled: () => AppError.forbidden('trading_disabled', "Trading is not enabled in this app's content."),
  notFriends: () => AppError.forbidden('not_friends', 'Trades are offered to friends only: both players must have added each other.'),
  accountTooNew: (hours: number) =>
    new AppError({
      kind: 'forbidden',
      code: 'account_too_new',
      detail: `Accounts may trade once they are ${hours} hours old.`,
      meta: { min_account_age_hours: hours },
    }),
  rarityMismatch: (give: string, want: string) =>
    AppError.unprocessable('rarity_mismatch', `A trade swaps copies of one rarity; this offers ${give} for ${want}.`, {
      pointer: '/data/attributes/want',
    }),
  notTradable: (id: string, rarity: string) =>
    AppError.unprocessable('not_tradable', `${id.slice(0, 100)} is ${rarity}, and ${rarity} copies do not trade in this app.`),
  notDissolvable: (id: string, rarity: string) =>
    AppError.unprocessable('not_dissolvable', `${id.slice(0, 100)} is ${rarity}, and ${rarity} copies cannot be dissolved in this app.`),
  notOwned: (id: string) =>
    AppError.conflict('not_owned', `No copy of ${id.slice(0, 100)} is free to trade: none is owned, or it is held in another trade.`),
  selfTrade: () =>
    AppError.unprocessable('partner_is_self', 'A player cannot trade with themselves.', { pointer: '/data/relationships/partner/data/id' }),
  offerExists: () => AppError.conflict('offer_exists', 'There is already an open offer of this collectible to this player.'),
  dailyCap: (cap: number, retryAfterSeconds: number) =>
    new AppError({
      kind: 'rate_limited',
      code: 'trade_cap_reached',
      detail: `At most ${cap} offers per player and UTC day.`,
      meta: { daily_offer_cap: cap, retry_after_seconds: Math.max(1, Math.ceil(retryAfterSeconds)) },
    }),
  noStamina: (retryAfterSeconds: number) =>
    new AppError({
      kind: 'conflict',
      code: 'no_trade_stamina',
      detail: 'No trade stamina left; one point comes back over time.',
      meta: { retry_after: Math.max(1, Math.ceil(retryAfterSeconds)) },
    }),
  keptCopies: (copies: number, keeps: number) =>
    new AppError({
      kind: 'conflict',
      code: 'would_dissolve_kept_copies',
      detail: `Dissolving keeps at least ${keeps} ${keeps === 1 ? 'copy' : 'copies'}; ${copies} owned, so at most ${Math.max(0, copies - keeps)} can be dissolved.`,
      meta: { copies, dissolve_keeps: keeps, max_quantity: Math.max(0, copies - keeps) },
    }),
  keyReused: () => AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was used for a different dissolve.'),
  tradeNotFound: () => AppError.notFound('trade_not_found', 'No such trade of this player.', { parameter: 'id' }),
  tradeEnded: (state: string) =>
    new AppError({ kind: 'conflict', code: 'trade_ended', detail: `This trade has already ended: ${state}.`, meta: { state } }),
  notYourMove: (action: string, who: 'offerer' | 'partner') =>
    AppError.forbidden('trade_action_forbidden', `Only the trade's ${who} can ${action} it.`),
  busy: () => AppError.conflict('trade_busy', 'The trade is being accepted right now; ask again in a moment.'),
  interrupted: () =>
    new AppError({ kind: 'unavailable', code: 'trade_interrupted', detail: 'The trade could not finish; anything taken is returned. Try again.' }),
};

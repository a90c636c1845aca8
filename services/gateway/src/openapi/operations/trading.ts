import { z } from 'zod';
import { DissolveDocument, TradeDocument, TradeListDocument } from '../../resources/trading.js';
import type { OperationDoc, ParamDoc } from '../route-doc.js';
import {
  idempotencyKeyHeader,
  INSUFFICIENT_FUNDS,
  INVALID_ID,
  INVALID_IDEMPOTENCY_KEY,
  NO_STORE_HEADER,
  PlayerIdOrMe,
  REPLAYED_HEADER,
  uuidParam,
} from './common.js';

/** Documentation of trading and dissolving (docs/content.md, "Trading"). */

const collectibleParam: ParamDoc = {
  schema: z.string().min(1).max(200),
  description: 'A collectible of the app (its id, as in `GET /api/v1/collectibles`), of which the caller holds copies.',
  example: 'ancient-clay-amulet',
};

/** POST /api/v1/players/me/collection/{collectible_id}/dissolve. */
export const dissolveCollectible: OperationDoc = {
  operationId: 'dissolveCollectible',
  tag: 'Trades',
  summary: 'Dissolve copies into trade tokens',
  description:
    "Takes `quantity` copies of the collectible out of the caller's collection and credits the rarity's `trading.dissolve` tokens per copy in the app's token currency (ledger reason `trade_dissolve`). " +
    'At least `trading.dissolve_keeps` copies always stay; copies held in an open trade are not in the collection and cannot be dissolved. ' +
    "The answer waits briefly for the wallet to apply the credit (`meta.credited`); the credit is durable and lands in any case. A collection's completion, and its reward, stay when its last copy is dissolved.",
  token: 'required',
  params: { collectible_id: collectibleParam },
  headers: idempotencyKeyHeader('the first dissolve, and nothing is dissolved twice'),
  bodyExample: { data: { type: 'dissolve', attributes: { quantity: 2 } } },
  responses: [{ status: 201, description: 'Dissolved.', schema: DissolveDocument, headers: { ...NO_STORE_HEADER, ...REPLAYED_HEADER } }],
  errors: {
    400: [INVALID_IDEMPOTENCY_KEY],
    403: ["the app's content does not enable trading (`trading_disabled`)"],
    404: ['no such collectible in the app (`collectible_not_found`)'],
    409: [
      'the caller holds no copy of it (`not_owned`)',
      'fewer than `dissolve_keeps` copies would stay; `meta.copies`, `meta.dissolve_keeps` and `meta.max_quantity` say how many can go (`would_dissolve_kept_copies`)',
      'the Idempotency-Key was used for another dissolve (`idempotency_key_reused`)',
    ],
    422: ['`quantity` is not a whole number from 1 to 1,000,000', "the collectible's rarity cannot be dissolved (`not_dissolvable`)"],
  },
};

const tradeId = uuidParam('A trade of the calling player (its offerer or its partner).');
const TRADE_NOT_FOUND = "no such trade of the caller: unknown, another app's, or between two other players (`trade_not_found`)";
const ENDED = 'the trade has already ended; `meta.state` says how (`trade_ended`)';
const BUSY = 'the trade is being accepted at this very moment; ask again (`trade_busy`)';

/** POST /api/v1/trades. */
export const offerTrade: OperationDoc = {
  operationId: 'offerTrade',
  tag: 'Trades',
  summary: 'Offer a trade to another player',
  description:
    'Offers one copy of `give` for one copy of `want` to the player named in `relationships.partner`. The copy of `give` leaves the collection at once and is held in escrow: it counts nowhere, ' +
    "and cannot be offered, dissolved or traded again until the trade ends. One trade stamina point (when the content has stamina) and the rarity's `token_cost` are charged. " +
    'Nothing is charged by a refusal. The partner answers with accept or decline; the offerer may cancel; an offer nobody answers expires after `trading.offer_ttl_hours`. ' +
    'At most one open offer per pair of players and collectible, and `trading.daily_offer_cap` offers per player and UTC day.',
  token: 'required',
  bodyExample: {
    data: {
      type: 'trade',
      attributes: { give: 'ancient-clay-amulet', want: 'ancient-bronze-coin' },
      relationships: { partner: { data: { type: 'player', id: '3f2b6c1e-8a4d-4f7b-9c2e-5d1a0b7e6f43' } } },
    },
  },
  responses: [{ status: 201, description: 'Offered: the trade, `state` `offered`.', schema: TradeDocument, headers: NO_STORE_HEADER }],
  errors: {
    403: [
      "the app's content does not enable trading (`trading_disabled`)",
      'the partner is not a confirmed friend, and trades are friends only (`not_friends`)',
      "the caller's account is younger than `trading.min_account_age_hours` (`account_too_new`)",
    ],
    404: ["no such collectible (`collectible_not_found`) or player (`player_not_found`, another app's players included) in the app"],
    409: [
      'the caller has no free copy of `give` (none, or all in open trades) (`not_owned`)',
      'an open offer of this collectible to this player exists (`offer_exists`)',
      'no trade stamina left; `meta.retry_after` is the seconds until one point is back (`no_trade_stamina`)',
      `the token balance does not cover the offer's cost: ${INSUFFICIENT_FUNDS} (\`insufficient_funds\`)`,
    ],
    422: [
      'the partner is the caller (`partner_is_self`)',
      'a collectible whose rarity does not trade (`not_tradable`)',
      '`give` and `want` are of different rarities where trades are same-rarity (`rarity_mismatch`)',
    ],
    429: ['`trading.daily_offer_cap` offers today already; `meta.retry_after_seconds` until the next UTC day (`trade_cap_reached`)'],
    503: ['the offer could not finish (the wallet did not answer); anything taken is returned (`trade_interrupted`)'],
  },
};

/** POST /api/v1/trades/{id}/accept. */
export const acceptTrade: OperationDoc = {
  operationId: 'acceptTrade',
  tag: 'Trades',
  summary: 'Accept a trade (its partner)',
  description:
    "One copy of `want` leaves the caller's collection and the rarity's `token_cost` is charged; then both copies move in one step: the offerer's escrowed `give` to the caller, the caller's `want` to the offerer. " +
    'A collection completed by a copy received is completed as by an opening, once, with its reward. Answers the trade, `state` `completed`. No body is needed.',
  token: 'required',
  params: { id: tradeId },
  responses: [{ status: 200, description: 'Completed.', schema: TradeDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID],
    403: [
      'the caller is the offerer, not the partner (`trade_action_forbidden`)',
      "trading is not enabled (`trading_disabled`), or the caller's account is too new (`account_too_new`)",
    ],
    404: [TRADE_NOT_FOUND],
    409: [
      ENDED,
      BUSY,
      'the caller has no free copy of `want` (`not_owned`); the trade stays open',
      `the token balance does not cover the accept's cost: ${INSUFFICIENT_FUNDS} (\`insufficient_funds\`)`,
    ],
    503: ['the accept could not finish (the wallet did not answer); the copy and tokens are returned and the trade stays open (`trade_interrupted`)'],
  },
};

/** POST /api/v1/trades/{id}/decline. */
export const declineTrade: OperationDoc = {
  operationId: 'declineTrade',
  tag: 'Trades',
  summary: 'Decline a trade (its partner)',
  description: "Ends the trade, `state` `declined`: the offerer's escrowed copy, stamina point and tokens go back to the offerer. No body is needed.",
  token: 'required',
  params: { id: tradeId },
  responses: [{ status: 200, description: 'Declined.', schema: TradeDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID],
    403: ['the caller is the offerer, not the partner (`trade_action_forbidden`)'],
    404: [TRADE_NOT_FOUND],
    409: [ENDED, BUSY],
  },
};

/** POST /api/v1/trades/{id}/cancel. */
export const cancelTrade: OperationDoc = {
  operationId: 'cancelTrade',
  tag: 'Trades',
  summary: 'Cancel a trade (its offerer)',
  description: 'Ends the trade, `state` `cancelled`: the escrowed copy, stamina point and tokens go back to the caller. No body is needed.',
  token: 'required',
  params: { id: tradeId },
  responses: [{ status: 200, description: 'Cancelled.', schema: TradeDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID],
    403: ['the caller is the partner, not the offerer (`trade_action_forbidden`)'],
    404: [TRADE_NOT_FOUND],
    409: [ENDED, BUSY],
  },
};

/** GET /api/v1/trades/{id}. */
export const getTrade: OperationDoc = {
  operationId: 'getTrade',
  tag: 'Trades',
  summary: 'One trade of the calling player',
  description: 'The trade, for its offerer and its partner only; anyone else gets 404.',
  token: 'required',
  params: { id: tradeId },
  responses: [{ status: 200, description: 'The trade.', schema: TradeDocument, headers: NO_STORE_HEADER }],
  errors: { 400: [INVALID_ID], 404: [TRADE_NOT_FOUND] },
};

const LIST_FILTERS =
  '`filter[role]=incoming` (the caller is the partner) or `outgoing` (the offerer), both by default; `filter[state]` one or more of `offered`, `completed`, `declined`, `cancelled`, `expired` (comma-separated).';

/** GET /api/v1/trades. */
export const listTrades: OperationDoc = {
  operationId: 'listTrades',
  tag: 'Trades',
  summary: "The calling player's trades",
  description: `A page of the caller's trades, newest first. ${LIST_FILTERS}`,
  token: 'required',
  responses: [{ status: 200, description: 'A page of trades.', schema: TradeListDocument, headers: NO_STORE_HEADER }],
  errors: { 400: ['a filter other than those above, or a value they do not take (`invalid_filter`)'] },
};

/** GET /api/v1/players/{id}/trades. */
export const playerTradeHistory: OperationDoc = {
  operationId: 'playerTradeHistory',
  tag: 'Trades',
  summary: "A player's trade history",
  description: `Every trade of the player, as offerer or partner, newest first (trades are not openings: the opening history never shows them). \`{id}\` is \`me\` or the caller's own id; a player reads only their own history. ${LIST_FILTERS}`,
  token: 'required',
  params: { id: { schema: PlayerIdOrMe, description: "`me`, or the calling player's own id.", example: 'me' } },
  responses: [{ status: 200, description: 'A page of trades.', schema: TradeListDocument, headers: NO_STORE_HEADER }],
  errors: { 400: ['a filter other than those above (`invalid_filter`)'], 404: ['any player but the caller (`player_not_found`)'] },
};

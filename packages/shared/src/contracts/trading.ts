import { z } from 'zod';
import { defineQuery, defineSubject, RetryKeySchema } from './subject.js';
import { UuidSchema } from './context.js';
import { PageRequestSchema } from './collections.js';

/** A collectible id as a request names it: any short string (an unknown one is a 404 of the service). */
const CollectibleIdSchema = z.string().min(1).max(200);

/**
 * Dissolves copies of one of the calling player's collectibles into trade tokens (docs/content.md,
 * "Trading"): `quantity` copies leave the collection and the rarity's `dissolve` tokens per copy
 * are credited in the token currency. At least `dissolve_keeps` copies stay. Applied at most once
 * per key (the client's Idempotency-Key, else the gateway's retry key).
 */
export const DissolveCollectible = defineSubject(
  'collections.v1.dissolve',
  z.object({
    collectibleId: CollectibleIdSchema,
    quantity: z.number().int().min(1).max(1_000_000),
    idempotencyKey: z.string().min(1).max(255).optional(),
    retryKey: RetryKeySchema.optional(),
  }),
  z.object({
    dissolveId: UuidSchema,
    collectibleId: z.string(),
    quantity: z.number().int(),
    tokens: z.object({ currency: z.string(), amount: z.number().int() }),
    copiesLeft: z.number().int(),
    /** The credit was applied by the wallet before the answer (false: it lands moments later). */
    credited: z.boolean(),
    replayed: z.boolean(),
  }),
  { callers: ['gateway'], keyedRetry: true },
);

/** What the players service knows of two players about to trade: friendship and account ages. */
export const TradeParties = defineQuery(
  'players.v1.trade_parties',
  z.object({ partnerId: UuidSchema }),
  z.object({
    /** Both players asked each other to be friends. */
    friends: z.boolean(),
    callerCreatedAt: z.string(),
    partnerCreatedAt: z.string(),
  }),
  { callers: ['collections'] },
);

/** The states a trade shows: open (`offered`) or ended in exactly one of the others. */
export const TRADE_STATES = ['offered', 'completed', 'declined', 'cancelled', 'expired'] as const;
export const TradeStateSchema = z.enum(TRADE_STATES);
export type TradeState = z.infer<typeof TradeStateSchema>;

/** One trade as its two players see it. */
export const TradeViewSchema = z.object({
  id: UuidSchema,
  state: TradeStateSchema,
  offererId: UuidSchema,
  partnerId: UuidSchema,
  give: z.object({ collectibleId: z.string(), rarity: z.string() }),
  want: z.object({ collectibleId: z.string(), rarity: z.string() }),
  /** Tokens the offer and the accept each cost (0: free), in `currency` (null: no token currency). */
  tokens: z.object({ currency: z.string().nullable(), offer: z.number().int(), accept: z.number().int() }),
  createdAt: z.string(),
  expiresAt: z.string(),
  endedAt: z.string().nullable(),
});
export type TradeView = z.infer<typeof TradeViewSchema>;

/** Offers one copy of `give` to `partnerId` for one copy of `want` (docs/content.md, "Trading"). */
export const OfferTrade = defineSubject(
  'collections.v1.offer_trade',
  z.object({ partnerId: UuidSchema, give: CollectibleIdSchema, want: CollectibleIdSchema }),
  TradeViewSchema,
  { callers: ['gateway'] },
);

/** Answers a trade: `accept` or `decline` (the partner), `cancel` (the offerer). */
export const ActOnTrade = defineSubject(
  'collections.v1.trade_action',
  z.object({ tradeId: UuidSchema, action: z.enum(['accept', 'decline', 'cancel']) }),
  TradeViewSchema,
  { callers: ['gateway'] },
);

/** One trade of the calling player (offerer or partner); another's is a 404. */
export const GetTrade = defineQuery('collections.v1.get_trade', z.object({ tradeId: UuidSchema }), TradeViewSchema, { callers: ['gateway'] });

/** The calling player's trades, newest first: `incoming` (they are the partner), `outgoing` (the offerer), or both. */
export const ListTrades = defineQuery(
  'collections.v1.list_trades',
  z.object({
    role: z.enum(['incoming', 'outgoing']).optional(),
    states: z.array(TradeStateSchema).max(TRADE_STATES.length).optional(),
    page: PageRequestSchema,
  }),
  z.object({ total: z.number().int(), trades: z.array(TradeViewSchema) }),
  { callers: ['gateway'] },
);

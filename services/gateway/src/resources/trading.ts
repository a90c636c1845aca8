import { z } from 'zod';
import { TradeStateSchema, UuidSchema, type DissolveCollectible, type ReplyOf, type TradeView } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, identifierOf, PageMeta, PaginationLinks, ResourceLinks, Timestamp } from './jsonapi.js';

/**
 * Response schemas of trading (docs/content.md, "Trading"): dissolves and trades, with the
 * functions that render them, typed by those schemas.
 */

/** A dissolve: copies of one collectible turned into trade tokens. */
export const Dissolve = component(
  'Dissolve',
  'Copies of one collectible dissolved into trade tokens.',
  z.object({
    type: z.literal('dissolve'),
    id: UuidSchema,
    attributes: z.object({
      collectible_id: z.string(),
      quantity: Count.describe('Copies dissolved.'),
      tokens: z
        .object({ currency: z.string(), amount: Count })
        .describe("What they gave: the rarity's `trading.dissolve` tokens per copy, in the token currency."),
      copies_left: Count.describe('Copies of the collectible the player still holds.'),
    }),
    meta: z.object({
      credited: z
        .boolean()
        .describe('Whether the wallet had applied the credit when this answer left; if false, it lands moments later (it is durable).'),
    }),
  }),
);

/** The answer of a dissolve. */
export const DissolveDocument = component(
  'DissolveDocument',
  'The dissolve made (or, for a replayed Idempotency-Key, the first one).',
  z.object({ data: Dissolve }),
);
export type DissolveDocument = z.output<typeof DissolveDocument>;

/** The dissolve answer as a document. */
export function dissolveDocument(r: ReplyOf<typeof DissolveCollectible>): DissolveDocument {
  return {
    data: {
      type: 'dissolve',
      id: r.dissolveId,
      attributes: { collectible_id: r.collectibleId, quantity: r.quantity, tokens: r.tokens, copies_left: r.copiesLeft },
      meta: { credited: r.credited },
    },
  };
}

/** One side of a trade: the collectible and its rarity. */
const TradeSide = z.object({ collectible_id: z.string(), rarity: z.string() });

/** One trade, as its two players see it. */
export const Trade = component(
  'Trade',
  "One trade between two players of the app: one copy of `give` (the offerer's) for one copy of `want` (the partner's). `state` is `offered` while it is open; then exactly one of `completed`, `declined`, `cancelled`, `expired`.",
  z.object({
    type: z.literal('trade'),
    id: UuidSchema,
    attributes: z.object({
      state: TradeStateSchema,
      give: TradeSide.describe("What the offerer gives (held in escrow while the trade is open: not counted in the offerer's collection)."),
      want: TradeSide.describe('What the offerer asks of the partner.'),
      tokens: z
        .object({ currency: z.string().nullable(), offer: Count, accept: Count })
        .describe('Trade tokens the offer and the accept each cost (returned to the offerer when the trade does not complete).'),
      created_at: Timestamp,
      expires_at: Timestamp.describe('An open offer expires then (`trading.offer_ttl_hours` after it was made).'),
      ended_at: Timestamp.nullable().describe('When it completed or ended; null while open.'),
    }),
    relationships: z.object({
      offerer: z.object({ data: identifierOf('player') }),
      partner: z.object({ data: identifierOf('player') }),
    }),
    links: ResourceLinks,
  }),
);
export type Trade = z.output<typeof Trade>;

/** A trade as primary data. */
export const TradeDocument = component('TradeDocument', 'One trade.', z.object({ data: Trade }));
export type TradeDocument = z.output<typeof TradeDocument>;

/** A page of trades. */
export const TradeListDocument = component(
  'TradeListDocument',
  "A page of the calling player's trades, newest first.",
  z.object({ data: z.array(Trade), meta: z.object({ total_count: Count, page: PageMeta }), links: PaginationLinks }),
);
export type TradeListDocument = z.output<typeof TradeListDocument>;

/** A trade resource with its canonical link. */
export function tradeResource(t: TradeView, links: { self: string }): Trade {
  return {
    type: 'trade',
    id: t.id,
    attributes: {
      state: t.state,
      give: { collectible_id: t.give.collectibleId, rarity: t.give.rarity },
      want: { collectible_id: t.want.collectibleId, rarity: t.want.rarity },
      tokens: t.tokens,
      created_at: t.createdAt,
      expires_at: t.expiresAt,
      ended_at: t.endedAt,
    },
    relationships: {
      offerer: { data: { type: 'player', id: t.offererId } },
      partner: { data: { type: 'player', id: t.partnerId } },
    },
    links,
  };
}

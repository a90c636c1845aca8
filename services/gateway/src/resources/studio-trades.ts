import { z } from 'zod';
import { TRADE_END_REASONS, type AdminTrade } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, PageMeta, PaginationLinks } from './jsonapi.js';
import { Trade, tradeResource } from './trading.js';

/** Response schemas of a player's trades in the admin API (docs/console.md, "A player's trades"), with their renderers. */

/** A trade as the studio sees it: the players' view and why it ended. */
export const StudioTrade = component(
  'StudioTrade',
  'One trade of the app as the studio sees it: what its two players see, and `reason`, why it ended.',
  Trade.extend({
    attributes: Trade.shape.attributes.extend({
      reason: z
        .enum(TRADE_END_REASONS)
        .nullable()
        .describe(
          'Why it ended: its state, or `cancelled_by_support` when the studio cancelled it (its state is then `cancelled`); null while it is open.',
        ),
    }),
  }),
);
export type StudioTrade = z.output<typeof StudioTrade>;

/** A page of a player's trades. */
export const StudioTradeListDocument = component(
  'StudioTradeListDocument',
  "A page of a player's trades (as offerer or partner), newest first.",
  z.object({
    data: z.array(StudioTrade),
    meta: z.object({ total_count: Count, page: PageMeta }),
    links: PaginationLinks,
  }),
);
export type StudioTradeListDocument = z.output<typeof StudioTradeListDocument>;

/** One trade, as support's cancel answers it. */
export const StudioTradeDocument = component('StudioTradeDocument', 'One trade, as the studio sees it.', z.object({ data: StudioTrade }));
export type StudioTradeDocument = z.output<typeof StudioTradeDocument>;

/** A trade for the studio, linked to where its players read it. */
export function studioTradeResource(t: AdminTrade, links: { self: string }): StudioTrade {
  const r = tradeResource(t, links);
  return { ...r, attributes: { ...r.attributes, reason: t.reason } };
}

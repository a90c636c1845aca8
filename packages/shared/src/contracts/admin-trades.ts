import { z } from 'zod';
import { UuidSchema } from './context.js';
import { PageRequestSchema } from './collections.js';
import { defineQuery, defineSubject } from './subject.js';
import { TradeViewSchema } from './trading.js';

// Operator subjects about trades (docs/console.md, "A player's trades"): a player's trades, and support's cancel of an open one.

/** Why a trade ended: its state, or `cancelled_by_support` when the studio cancelled it; null while it is open. */
export const TRADE_END_REASONS = ['completed', 'declined', 'cancelled', 'cancelled_by_support', 'expired'] as const;

/** A trade as the studio sees it: what its players see, and why it ended. */
export const AdminTradeSchema = TradeViewSchema.extend({ reason: z.enum(TRADE_END_REASONS).nullable() });
export type AdminTrade = z.infer<typeof AdminTradeSchema>;

/** collections: a player's trades (as offerer or partner), the newest first; trades that failed before they were offered are not shown. */
export const AdminPlayerTrades = defineQuery(
  'collections.v1.admin_player_trades',
  z.object({ appId: UuidSchema, playerId: UuidSchema, page: PageRequestSchema }),
  z.object({ total: z.number().int().min(0), trades: z.array(AdminTradeSchema) }),
  { callers: ['gateway', 'admin'] },
);

/**
 * collections: support ends an open trade (`cancelled`, reason `cancelled_by_support`) as the
 * offerer's cancel does, in one transaction under the trade's lock: the escrowed copy and the
 * stamina point back to the offerer, the offer's tokens refunded once by their reference, the
 * trade's audit log and `trade.ended`. 404 trade_not_found (not of this app), 409 trade_ended
 * (with its state), 409 trade_busy (being accepted right now).
 */
export const AdminCancelTrade = defineSubject(
  'collections.v1.admin_cancel_trade',
  z.object({ appId: UuidSchema, tradeId: UuidSchema }),
  AdminTradeSchema,
  { callers: ['gateway', 'admin'] },
);

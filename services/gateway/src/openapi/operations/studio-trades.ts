import { z } from 'zod';
import { StudioTradeDocument, StudioTradeListDocument } from '../../resources/studio-trades.js';
import type { OperationDoc } from '../route-doc.js';
import { INVALID_ID, NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of a player's trades in the admin API (docs/console.md, "A player's trades"). */

/** GET /api/v1/admin/players/{id}/trades. */
export const adminPlayerTrades: OperationDoc = {
  operationId: 'adminPlayerTrades',
  tag: 'Admin',
  summary: "A player's trades",
  description:
    "The player's trades as offerer or partner, newest first, a page at a time (20 by default, at most 100): state, partner, what each side gives, when it was made and ended, and `reason`, why it ended (`cancelled_by_support` when the studio cancelled it). A read: not recorded in the audit log. Never cached.",
  token: 'none',
  params: { id: { schema: z.string().uuid(), description: 'The player id (UUID).', example: '0b7d6a4e-2f5c-4f1e-9a51-3c2d1e0f9a8b' } },
  responses: [{ status: 200, description: "A page of the player's trades.", schema: StudioTradeListDocument, headers: NO_STORE_HEADER }],
  errors: { 400: [INVALID_ID], ...SECRET_KEY_ONLY, 404: ["no such player in this app (`player_not_found`); another app's players are never found"] },
};

/** POST /api/v1/admin/trades/{id}/cancel. */
export const adminCancelTrade: OperationDoc = {
  operationId: 'adminCancelTrade',
  tag: 'Admin',
  summary: 'Cancel an open trade (support)',
  description:
    "Ends an open trade as its offerer's cancel would, with `reason` `cancelled_by_support`: the escrowed copy goes back to the offerer's collection, the stamina point the offer spent comes back, and the tokens it cost are refunded once, by the reference the offer debited them under. Both players see it `cancelled`; `trade.ended` goes out with the reason `cancelled`. " +
    'The body is optional: none, or `{"meta": {"note": "…"}}` (1 to 500 characters), kept with the action in the audit log; anything else is refused. Recorded in the audit log. Never cached.',
  token: 'none',
  params: { id: { schema: z.string().uuid(), description: 'The trade id (UUID).', example: '5a1f0c9e-7b2d-4c3e-8f10-2d3c4b5a6e7f' } },
  bodyExample: { meta: { note: 'Ticket 4720: offered by mistake' } },
  responses: [{ status: 200, description: 'The trade, cancelled.', schema: StudioTradeDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID],
    ...SECRET_KEY_ONLY,
    404: ["no such trade in this app (`trade_not_found`); another app's trades are never found"],
    409: [
      'the trade has already ended (`trade_ended`, its state in `meta.state`; an offer found past its expiry is ended as `expired` then)',
      'the trade is being accepted right now (`trade_busy`): ask again in a moment',
    ],
    422: ['a body other than `{"meta": {"note": "…"}}`, or a note empty or longer than 500 characters (`invalid_field`)'],
  },
};

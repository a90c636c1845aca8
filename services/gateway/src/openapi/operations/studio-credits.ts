import { z } from 'zod';
import { StudioCreditDocument } from '../../resources/studio-credits.js';
import type { OperationDoc } from '../route-doc.js';
import { INVALID_ID, NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of the studio's grants of currency (docs/operations.md, "Admin API"). */

/** POST /api/v1/admin/players/{id}/credits. */
export const adminCreditPlayer: OperationDoc = {
  operationId: 'adminCreditPlayer',
  tag: 'Admin',
  summary: 'Grant currency to a player',
  description:
    "Adds `amount` of any currency of the app to a player's balance: how the studio's servers grant what a player paid for (a store purchase of a paid currency, which players can never credit themselves: `compliance.paid_currencies`) or any other currency. " +
    'Once per `reference` in the app (a store receipt or order id): the same reference with the same player, currency and amount answers 200 with the first answer and `meta.replayed: true`, adding nothing; with anything else 409 `reference_reused`. ' +
    'The ledger row has the reason `studio_grant` and the reference; a `currency.credited` webhook event follows. Recorded in the audit log, with `meta.note` when given. Never cached.',
  token: 'none',
  params: { id: { schema: z.string().uuid(), description: 'The player id (UUID).', example: '0b7d6a4e-2f5c-4f1e-9a51-3c2d1e0f9a8b' } },
  bodyExample: {
    data: { type: 'credit', attributes: { currency: 'gems', amount: '100', reference: 'receipt:GPA.3372-1164-5521-80131' } },
    meta: { note: 'Ticket 4710: purchase not delivered' },
  },
  responses: [
    {
      status: 201,
      description: "Granted: the player's balance of the currency after the grant.",
      schema: StudioCreditDocument,
      headers: NO_STORE_HEADER,
    },
    {
      status: 200,
      description: 'This reference was granted before with the same player, currency and amount: nothing added, the first answer again.',
      schema: StudioCreditDocument,
      headers: NO_STORE_HEADER,
    },
  ],
  errors: {
    400: [INVALID_ID],
    ...SECRET_KEY_ONLY,
    404: ["no such player in this app (`player_not_found`); another app's players are never found"],
    409: [
      'the reference was used for a different grant: another player, currency or amount (`reference_reused`)',
      'the balance would exceed the largest amount the wallet holds (`balance_limit_exceeded`)',
    ],
    422: [
      'a body that is not `{data: {type: "credit", attributes: {currency, amount, reference}}, meta?: {note}}`, a note empty or longer than 500 characters, an amount that is not a decimal string with at most two decimals, a reference empty or longer than 200 characters, or an unknown attribute (`invalid_field`)',
      "a currency the app does not have (`currency_not_found`), an amount of zero (`amount_not_positive`), above the currency's maximum credit (`amount_above_maximum`) or a fraction of a whole-unit currency (`amount_not_whole`)",
    ],
  },
};

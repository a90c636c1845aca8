import { z } from 'zod';
import { CurrencyCodeSchema, SignedDecimalSchema, UuidSchema, type ReplyOf, AdminCreditPlayer } from '@ccs/shared';
import { component } from '../openapi/components.js';

/** Response schema of the studio's grants of currency (the admin API). */

/** A player's balance of one currency after a studio grant. */
export const StudioCreditDocument = component(
  'StudioCreditDocument',
  "The player's balance of the granted currency just after the grant (on a repeat of a reference: the first grant's answer, with `meta.replayed: true`).",
  z.object({
    data: z.object({
      type: z.literal('balance'),
      id: CurrencyCodeSchema.describe('The currency code.'),
      attributes: z.object({
        currency: CurrencyCodeSchema,
        amount: SignedDecimalSchema.describe(
          'The balance after the grant: a decimal string with two decimals, e.g. `"115.00"`; still below zero when the grant covered only part of a debt.',
        ),
      }),
    }),
    meta: z.object({
      replayed: z.boolean().describe('True when this reference was granted before: nothing was added, this is the first answer.'),
      player_id: UuidSchema,
    }),
  }),
);

/** What `StudioCreditDocument` describes, as the gateway renders it. */
export type StudioCreditDocument = z.output<typeof StudioCreditDocument>;

/** A studio credit: the balance after it, and whether it was a replay. */
export function studioCreditDocument(r: ReplyOf<typeof AdminCreditPlayer>, playerId: string): z.output<typeof StudioCreditDocument> {
  return {
    data: { type: 'balance', id: r.currency, attributes: { currency: r.currency, amount: r.balance } },
    meta: { replayed: r.replayed, player_id: playerId },
  };
}

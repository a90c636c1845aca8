import { z } from 'zod';
import { CurrencyCodeSchema, DecimalSchema, SignedDecimalSchema, UuidSchema } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { NoRelationships, SelfLink } from './jsonapi.js';

/** Response schemas of currencies and credits. */

/** A balance: below zero while the player owes some of it (a debt). */
const Balance = SignedDecimalSchema.describe(
  'A decimal string with at most two decimals (never a JSON number), e.g. `"1525.50"`; below zero while the player is in debt, e.g. `"-300.00"`.',
);

/** One currency of the app. */
export const Currency = component(
  'Currency',
  "A currency of the app; `balance` is the calling player's, present only with a Bearer token. " +
    'A store refund takes back the currency its purchase granted even when it was spent: the balance then goes below zero (`balance.amount` `"-300.00"`), ' +
    'and `meta.debt` says what is owed (`"300.00"`). While in debt every spend of the currency is refused (403 `currency_in_debt`); credits bring the balance back to zero.',
  z.object({
    type: z.literal('currency'),
    id: UuidSchema,
    attributes: z.object({ code: CurrencyCodeSchema, name: z.string(), balance: z.object({ amount: Balance }).optional() }),
    relationships: NoRelationships,
    meta: z
      .object({
        debt: DecimalSchema.describe(
          'What the calling player owes of this currency (the amount below zero, as a positive decimal string, e.g. `"300.00"`): present only while the balance is below zero.',
        ),
      })
      .optional(),
  }),
);

/** The app's currencies. */
export const CurrencyListDocument = component(
  'CurrencyListDocument',
  "The app's currencies.",
  z.object({ data: z.array(Currency), links: SelfLink }),
);

/** The credit answer: plain JSON, as the spec shows. */
export const CreditResult = component(
  'CreditResult',
  "The balance after the credit (plain JSON, the spec's exception to JSON:API); still below zero when the credit covered only part of a debt.",
  z.object({ data: z.object({ balance: z.object({ amount: Balance }) }) }),
);

/** What `CreditResult` describes, as the gateway renders it. */
export type CreditResult = z.output<typeof CreditResult>;
/** What `Currency` describes, as the gateway renders it. */
export type Currency = z.output<typeof Currency>;

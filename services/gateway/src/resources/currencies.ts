import { z } from 'zod';
import { CurrencyCodeSchema, DecimalSchema, SignedDecimalSchema, UuidSchema, type CurrencyView } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { fieldsOf, NoRelationships, SelfLink, sparse } from './jsonapi.js';

/**
 * The currency resource (type `currency`) and the credit answer: their response schemas and the
 * function that renders a currency, typed by its schema.
 */

/** A balance: below zero while the player owes some of it (a debt). */
const Balance = SignedDecimalSchema.describe(
  'A decimal string with at most two decimals (never a JSON number), e.g. `"1525.50"`; below zero while the player is in debt, e.g. `"-300.00"`.',
);

const CurrencyAttributes = z.object({ code: CurrencyCodeSchema, name: z.string(), balance: z.object({ amount: Balance }).optional() });

/** Fields a client may select for a currency (`fields[currency]`): every attribute. */
export const CURRENCY_FIELDS = fieldsOf(CurrencyAttributes);

/** One currency of the app, as rendered. */
const RenderedCurrency = z.object({
  type: z.literal('currency'),
  id: UuidSchema,
  attributes: CurrencyAttributes,
  relationships: NoRelationships,
  meta: z
    .object({
      debt: DecimalSchema.describe(
        'What the calling player owes of this currency (the amount below zero, as a positive decimal string, e.g. `"300.00"`): present only while the balance is below zero.',
      ),
    })
    .optional(),
});

/** One currency of the app, as documented: `fields[currency]` may leave attributes out. */
export const Currency = component(
  'Currency',
  "A currency of the app; `balance` is the calling player's, present only with a Bearer token. " +
    'A store refund takes back the currency its purchase granted even when it was spent: the balance then goes below zero (`balance.amount` `"-300.00"`), ' +
    'and `meta.debt` says what is owed (`"300.00"`). While in debt every spend of the currency is refused (403 `currency_in_debt`); credits bring the balance back to zero.',
  RenderedCurrency.extend({ attributes: sparse('currency', CurrencyAttributes) }),
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

/** A currency as the wallet reports it; `meta.debt` only while the caller's balance is below zero. */
export const currencyResource = (c: CurrencyView): z.output<typeof RenderedCurrency> => ({
  type: 'currency',
  id: c.id,
  attributes: { code: c.code, name: c.name, ...(c.balance === undefined ? {} : { balance: { amount: c.balance } }) },
  relationships: {},
  ...(c.debt === undefined ? {} : { meta: { debt: c.debt } }),
});

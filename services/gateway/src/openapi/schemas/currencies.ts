import { z } from 'zod';
import { CurrencyCodeSchema, DecimalSchema, UuidSchema } from '@ccs/shared';
import { component } from '../components.js';
import { NoRelationships, SelfLink } from './jsonapi.js';

/** Response schemas of currencies and credits. */

const Amount = DecimalSchema.describe('A decimal string with at most two decimals (never a JSON number), e.g. `"1525.50"`.');

/** One currency of the app. */
export const Currency = component(
  'Currency',
  "A currency of the app; `balance` is the calling player's, present only with a Bearer token.",
  z.object({
    type: z.literal('currency'),
    id: UuidSchema,
    attributes: z.object({ code: CurrencyCodeSchema, name: z.string(), balance: z.object({ amount: Amount }).optional() }),
    relationships: NoRelationships,
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
  "The balance after the credit (plain JSON, the spec's exception to JSON:API).",
  z.object({ data: z.object({ balance: z.object({ amount: Amount }) }) }),
);

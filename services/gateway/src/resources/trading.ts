import { z } from 'zod';
import { UuidSchema, type DissolveCollectible, type ReplyOf } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count } from './jsonapi.js';

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

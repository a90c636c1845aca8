import { z } from 'zod';
import { component } from '../components.js';
import { Count, NoRelationships } from './jsonapi.js';

/** One spend limit and the player's standing against it (the attributes of a spend_limit resource). */
export const SpendLimitAttributes = z.object({
  period: z.enum(['day', 'month', 'payment']),
  limit: z.number().int().min(1).describe('Units of paid currency that may be spent on paid random items in the period.'),
  spent: z.number().min(0).describe('Units spent in the current period, payments under way included.'),
  remaining: z.number().min(0).describe('`limit` − `spent`, never below 0.'),
  resets_at: z
    .string()
    .nullable()
    .describe('When the period ends (ISO 8601 UTC): the next midnight, or the first of next month; null for a cap per payment.'),
  rule: z
    .object({ pack: z.string(), rule: z.string(), source: z.string() })
    .optional()
    .describe("The rule pack rule that sets this limit (`compliance.rule_packs`; docs/compliance.md); absent for the content's own limits."),
});

/** Response schema of the calling player's spend limits (DESIGN.md §7, docs/compliance.md). */
export const SpendLimitsDocument = component(
  'SpendLimitsDocument',
  "The spend limits of the app's compliance rules that hold the calling player, the strictest per period, each with the player's standing; empty when none applies.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('spend_limit'),
        id: z.enum(['day', 'month', 'payment']).describe('The period: the UTC calendar day or month, or one payment (a cap per payment).'),
        attributes: SpendLimitAttributes,
        relationships: NoRelationships,
      }),
    ),
    meta: z.object({ total_count: Count }),
  }),
);

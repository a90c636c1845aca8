import { z } from 'zod';
import { component } from '../openapi/components.js';
import { Count, NoRelationships } from './jsonapi.js';
import { type ReplyOf, GetSpendLimits } from '@ccs/shared';

/** One spend limit and the player's standing against it (the attributes of a spend_limit resource). */
export const SpendLimitAttributes = z.object({
  period: z.enum(['day', 'month', 'payment']),
  limit: z
    .number()
    .int()
    .min(0)
    .describe(
      'What may be spent in the period: units of paid currency spent on paid random items, or, with `money`, that money paid in verified store transactions. 0: no payment at all.',
    ),
  spent: z
    .number()
    .min(0)
    .describe(
      'Spent in the current period: units of paid currency, payments under way included; with `money`, the store transactions verified in the period and not refunded, converted into `money`.',
    ),
  remaining: z.number().min(0).describe('`limit` − `spent`, never below 0.'),
  resets_at: z
    .string()
    .nullable()
    .describe('When the period ends (ISO 8601 UTC): the next midnight, or the first of next month; null for a cap per payment.'),
  money: z
    .string()
    .optional()
    .describe(
      'A limit on store spend: the ISO 4217 money it counts in (`compliance.spend_limits[].money`; other currencies converted by `compliance.money_rates`). Absent for a limit in units of paid currency.',
    ),
  unverifiable: z
    .array(z.string())
    .optional()
    .describe(
      "A limit in money: currencies of this period's store transactions that no rate converts into `money` (left out of `spent`). While any is listed, store purchases are refused (403 `spend_limit_unverifiable`).",
    ),
  rule: z
    .object({ pack: z.string(), rule: z.string(), source: z.string() })
    .optional()
    .describe("The rule pack rule that sets this limit (`compliance.rule_packs`; docs/compliance.md); absent for the content's own limits."),
});

/** Response schema of the calling player's spend limits (docs/design.md §7, docs/compliance.md). */
export const SpendLimitsDocument = component(
  'SpendLimitsDocument',
  "The spend limits of the app's compliance rules that hold the calling player, the strictest per period (in units of paid currency, then per money), each with the player's standing; empty when none applies.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('spend_limit'),
        id: z
          .string()
          .regex(/^([A-Z]{3}-)?(day|month|payment)$/)
          .describe(
            'The period (the UTC calendar day or month, or one payment: a cap per payment), preceded by the money for a limit in money: `day`, `CNY-month`.',
          ),
        attributes: SpendLimitAttributes,
        relationships: NoRelationships,
      }),
    ),
    meta: z.object({ total_count: Count }),
  }),
);

/** What `SpendLimitsDocument` describes, as the gateway renders it. */
export type SpendLimitsDocument = z.output<typeof SpendLimitsDocument>;

type Standing = ReplyOf<typeof GetSpendLimits>['limits'][number];

/** A limit and the player's standing as a spend_limit resource's attributes (also the studio's player look-up). */
export const spendLimitAttributes = (l: Standing): SpendLimitsDocument['data'][number]['attributes'] => ({
  period: l.period,
  limit: l.limit,
  spent: l.spent,
  remaining: l.remaining,
  resets_at: l.resetsAt,
  ...(l.money ? { money: l.money } : {}),
  ...(l.unverifiable ? { unverifiable: l.unverifiable } : {}),
  ...(l.rule ? { rule: l.rule } : {}),
});

/** The caller's spend limits, one resource per period (`day`) and, for limits in money, per money and period (`CNY-month`). */
export const limitsDocument = (r: ReplyOf<typeof GetSpendLimits>): SpendLimitsDocument => ({
  data: r.limits.map((l) => ({
    type: 'spend_limit' as const,
    id: l.money ? `${l.money}-${l.period}` : l.period,
    attributes: spendLimitAttributes(l),
    relationships: {},
  })),
  meta: { total_count: r.limits.length },
});

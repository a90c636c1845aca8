import { z } from 'zod';
import { defineQuery } from './subject.js';

/** A spend limit's period (docs/design.md §7): the UTC calendar day or month, or one payment (a rule pack's cap per payment). */
export const SpendPeriodSchema = z.enum(['day', 'month', 'payment']);

/** The rule pack's rule behind a limit or refusal (docs/design.md §7, "Rule packs"). */
export const RuleRefSchema = z.object({ pack: z.string(), rule: z.string(), source: z.string() });

/**
 * Where the calling player stands against one limit: what was spent in the current period
 * (units of paid currency spent on paid random items, payments under way included; or, for a
 * limit in `money`, the verified store transactions not refunded, converted into that money), what
 * remains, and when the period ends (the next UTC midnight, or the first of next month, ISO 8601
 * UTC; none for a cap per payment, against which nothing is spent).
 */
export const SpendStandingSchema = z.object({
  period: SpendPeriodSchema,
  /** 0: no payment is allowed at all (a rule pack's "no payments"). */
  limit: z.number().int().min(0),
  spent: z.number().min(0),
  remaining: z.number().min(0),
  /** Null for a cap per payment (nothing accumulates). */
  resetsAt: z.string().nullable(),
  /** The ISO 4217 money of a limit on store spend; absent for a limit in units of paid currency. */
  money: z.string().optional(),
  /**
   * A limit in money: the currencies of this period's transactions that `compliance.money_rates`
   * cannot convert into it (left out of `spent`); while there are any, store purchases are refused
   * (`spend_limit_unverifiable`).
   */
  unverifiable: z.array(z.string()).optional(),
  /** Set when a rule pack set the limit. */
  rule: RuleRefSchema.optional(),
});
export type SpendStanding = z.infer<typeof SpendStandingSchema>;

/**
 * The spend limits of the app's current content that apply to the calling player (ctx.playerId),
 * at most one per period (the strictest) in units of paid currency and one per period and money,
 * with their standing; none when no limit applies.
 */
export const GetSpendLimits = defineQuery('chests.v1.spend_limits', z.object({}), z.object({ limits: z.array(SpendStandingSchema) }), {
  callers: ['gateway'],
});

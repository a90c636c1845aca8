import { z } from 'zod';
import { defineQuery } from './subject.js';

/** A spend limit's period (DESIGN.md §7): the UTC calendar day or month, or one payment (a rule pack's cap per payment). */
export const SpendPeriodSchema = z.enum(['day', 'month', 'payment']);

/** The rule pack's rule behind a limit or refusal (DESIGN.md §7, "Rule packs"). */
export const RuleRefSchema = z.object({ pack: z.string(), rule: z.string(), source: z.string() });

/**
 * Where the calling player stands against one limit: units of paid currency spent on paid random
 * items in the current period (payments under way count), what remains, and when the period ends
 * (the next UTC midnight, or the first of next month, ISO 8601 UTC; none for a cap per payment,
 * against which nothing is spent).
 */
export const SpendStandingSchema = z.object({
  period: SpendPeriodSchema,
  limit: z.number().int().positive(),
  spent: z.number().min(0),
  remaining: z.number().min(0),
  /** Null for a cap per payment (nothing accumulates). */
  resetsAt: z.string().nullable(),
  /** Set when a rule pack set the limit. */
  rule: RuleRefSchema.optional(),
});
export type SpendStanding = z.infer<typeof SpendStandingSchema>;

/**
 * The spend limits of the app's current content that apply to the calling player (ctx.playerId),
 * at most one per period (the strictest), with their standing; none when no limit applies.
 */
export const GetSpendLimits = defineQuery('chests.v1.spend_limits', z.object({}), z.object({ limits: z.array(SpendStandingSchema) }), {
  callers: ['gateway'],
});

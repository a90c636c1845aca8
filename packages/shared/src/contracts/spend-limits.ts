import { z } from 'zod';
import { defineQuery } from './subject.js';

/** A spend limit's period (DESIGN.md §7): the UTC calendar day or month. */
export const SpendPeriodSchema = z.enum(['day', 'month']);

/**
 * Where the calling player stands against one limit: units of paid currency spent on paid random
 * items in the current period (payments under way count), what remains, and when the period ends
 * (the next UTC midnight, or the first of next month, ISO 8601 UTC).
 */
export const SpendStandingSchema = z.object({
  period: SpendPeriodSchema,
  limit: z.number().int().positive(),
  spent: z.number().min(0),
  remaining: z.number().min(0),
  resetsAt: z.string(),
});
export type SpendStanding = z.infer<typeof SpendStandingSchema>;

/**
 * The spend limits of the app's current content that apply to the calling player (ctx.playerId),
 * at most one per period (the strictest), with their standing; none when no limit applies.
 */
export const GetSpendLimits = defineQuery('chests.v1.spend_limits', z.object({}), z.object({ limits: z.array(SpendStandingSchema) }), {
  callers: ['gateway'],
});

import { z } from 'zod';
import { OpeningViewSchema } from './chests.js';
import { UuidSchema } from './context.js';
import { defineSubject, RetryKeySchema } from './subject.js';

/** Most chests one batch open takes. */
export const MAX_BATCH_OPEN = 50;

/**
 * Opens several of ctx.playerId's chests at once, in the order given, all or nothing: when one
 * cannot be opened nothing is, and the error names it (`source.pointer` /data/<index>/id). One
 * transaction in chests, one grant message per opening. The same `idempotencyKey` with the same
 * chests answers the first batch again (`replayed`); with other chests it is a 409.
 */
export const OpenChests = defineSubject(
  'chests.v1.open_batch',
  z.object({
    chestIds: z.array(UuidSchema).min(1).max(MAX_BATCH_OPEN),
    idempotencyKey: z.string().min(1).max(255).optional(),
    retryKey: RetryKeySchema.optional(),
  }),
  z.object({
    openings: z.array(OpeningViewSchema),
    replayed: z.boolean(),
    /** Whether collections confirmed every grant before the answer (else they land shortly). */
    granted: z.boolean(),
  }),
  { callers: ['gateway'], keyedRetry: true },
);

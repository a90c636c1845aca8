import { z } from 'zod';
import { InventoryChestViewSchema } from './chests.js';
import { defineSubject } from './subject.js';
import { CurrencyCodeSchema } from './wallet.js';
import { DecimalSchema, UuidSchema } from './context.js';

/**
 * Starts the timer of one of ctx.playerId's time-locked chests, or with `skipWith` pays to unlock
 * it at once (docs/content.md, "Time-locked chests"). Safe to retry: a running timer is left as
 * it is, and an unlocked chest is answered as it is, with nothing charged.
 * Errors: 404 chest_not_found, 403 chest_not_owned / chest_already_opened, 409
 * chest_not_time_locked, unlock_slot_busy, unlock_skip_unavailable, insufficient_funds, 422
 * skip_currency_mismatch, 503 unlock_interrupted (the skip was refunded).
 */
export const UnlockChest = defineSubject(
  'chests.v1.unlock',
  z.object({ chestId: UuidSchema, skipWith: CurrencyCodeSchema.optional() }),
  z.object({
    chest: InventoryChestViewSchema,
    /** What this call charged to skip the timer; absent when nothing was charged. */
    charged: z.object({ currency: z.string(), amount: z.number().int().min(1), balance: DecimalSchema }).optional(),
  }),
  { callers: ['gateway'] },
);

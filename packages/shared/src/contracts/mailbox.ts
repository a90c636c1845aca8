import { z } from 'zod';
import { InventoryChestViewSchema } from './chests.js';
import { UuidSchema } from './context.js';
import { defineQuery, defineSubject } from './subject.js';

/**
 * The overflow mailbox (docs/content.md, "Overflow mailbox"): with `players.inventory_overflow =
 * mailbox`, a granted chest that does not fit in a full inventory waits here, under the id it
 * will keep in the inventory, until the player claims it or it expires.
 */

/** One chest waiting in a player's mailbox: as an inventory chest (its id is the one it keeps once claimed), with its arrival and expiry. */
export const MailboxItemViewSchema = InventoryChestViewSchema.omit({ acquiredAt: true, lock: true }).extend({
  /** ISO 8601 UTC: when the grant arrived. */
  receivedAt: z.string(),
  /** ISO 8601 UTC: from then on it is neither listed nor claimable. */
  expiresAt: z.string(),
});
export type MailboxItemView = z.infer<typeof MailboxItemViewSchema>;

/** ctx.playerId's unexpired, unclaimed mailbox items, soonest to expire first, and room in the inventory. */
export const ListMailbox = defineQuery(
  'chests.v1.list_mailbox',
  z.object({ page: z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) }) }),
  z.object({
    items: z.array(MailboxItemViewSchema),
    total: z.number().int().min(0),
    /** The inventory a claim would go to: capacity and unopened chests. */
    capacity: z.number().int().min(0),
    used: z.number().int().min(0),
  }),
  { callers: ['gateway'] },
);

/**
 * Moves one of ctx.playerId's mailbox items into the inventory: 404 mailbox_item_not_found (unknown,
 * another player's, expired), 409 mailbox_item_claimed (claimed before), 409 inventory_full.
 */
export const ClaimMailboxItem = defineSubject('chests.v1.claim_mailbox_item', z.object({ itemId: UuidSchema }), InventoryChestViewSchema, {
  callers: ['gateway'],
});

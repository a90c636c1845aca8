import { z } from 'zod';
import { ChestSourceSchema, UuidSchema, type MailboxItemView } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, NoRelationships, PageMeta, PaginationLinks, Timestamp } from './jsonapi.js';
import { InventoryChest } from './chests.js';

/**
 * Response schemas of the overflow mailbox (docs/content.md, "Overflow mailbox"), with the
 * functions that render them, typed by those schemas.
 */

/** One chest waiting in the mailbox. */
export const MailboxItem = component(
  'MailboxItem',
  "A granted chest that did not fit in the full inventory, waiting to be claimed. Its `id` becomes the inventory chest's id once claimed.",
  z.object({
    type: z.literal('mailbox_item'),
    id: UuidSchema,
    attributes: z.object({
      chest_type_id: UuidSchema.describe('The catalog chest (chest type).'),
      name: z.string(),
      description: z.string(),
      images: z.array(z.string()).describe('Image URLs.'),
      source: ChestSourceSchema.describe("How the chest was granted (as an inventory chest's `meta.source`)."),
      received_at: Timestamp.describe('When the grant arrived.'),
      expires_at: Timestamp.describe('From then on the item is neither listed nor claimable (`mailbox_ttl_days` after it arrived).'),
    }),
    relationships: NoRelationships,
  }),
);

/** A page of the mailbox. */
export const MailboxDocument = component(
  'MailboxDocument',
  "A page of the calling player's mailbox: unclaimed, unexpired items, soonest to expire first.",
  z.object({
    data: z.array(MailboxItem),
    meta: z.object({
      total_count: Count.describe('Items waiting.'),
      page: PageMeta,
      inventory_status: z
        .object({ capacity: Count, used: Count, available: Count })
        .describe('The inventory a claim moves a chest into: a claim needs `available` > 0.'),
    }),
    links: PaginationLinks,
  }),
);

/** A claimed item, now an inventory chest. */
export const MailboxClaimDocument = component(
  'MailboxClaimDocument',
  'The chest claimed, now in the inventory under the same id (`acquired_at` is the time of the claim).',
  z.object({ data: InventoryChest }),
);

/** What `MailboxDocument` describes, as the gateway renders it. */
export type MailboxDocument = z.output<typeof MailboxDocument>;
/** What `MailboxItem` describes, as the gateway renders it. */
export type MailboxItem = z.output<typeof MailboxItem>;

/** A waiting chest: its type's presentation, where it came from and when it expires. */
export const mailboxItem = (m: MailboxItemView): MailboxItem => ({
  type: 'mailbox_item',
  id: m.id,
  attributes: {
    chest_type_id: m.chestTypeId,
    name: m.name,
    description: m.description,
    images: m.images,
    source: m.source,
    received_at: m.receivedAt,
    expires_at: m.expiresAt,
  },
  relationships: {},
});

import { MailboxClaimDocument, MailboxDocument } from '../../resources/mailbox.js';
import type { OperationDoc } from '../route-doc.js';
import { INVALID_ID, NO_STORE_HEADER, uuidParam } from './common.js';

/** Documentation of the overflow mailbox (docs/content.md, "Overflow mailbox"). */

/** GET /api/v1/players/me/mailbox. */
export const listMailbox: OperationDoc = {
  operationId: 'listMailbox',
  tag: 'Mailbox',
  summary: "The calling player's mailbox",
  description:
    "Chests granted (rewards, studio grants) while the inventory was full, when the app's content sets `players.inventory_overflow` to `mailbox`. " +
    'Each waits `players.mailbox_ttl_days` to be claimed; expired items are not listed. Soonest to expire first. `meta.inventory_status` tells whether a claim has room. Never cached.',
  token: 'required',
  responses: [{ status: 200, description: 'A page of the mailbox.', schema: MailboxDocument, headers: NO_STORE_HEADER }],
  errors: { 503: ["the app's content is not loaded yet (`content_unavailable`)"] },
};

/** POST /api/v1/players/me/mailbox/{id}/claim. */
export const claimMailboxItem: OperationDoc = {
  operationId: 'claimMailboxItem',
  tag: 'Mailbox',
  summary: 'Claim a chest from the mailbox',
  description:
    'Moves one waiting chest into the inventory, under the same id, when the inventory has room; it is then openable like any other. ' +
    'Safe to retry: the chest is added once, and a second claim answers 409 `mailbox_item_claimed` with the chest id in `meta.chest_id`. No body is needed.',
  token: 'required',
  params: { id: uuidParam("One of the calling player's mailbox items.") },
  responses: [{ status: 200, description: 'The chest, now in the inventory.', schema: MailboxClaimDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID],
    404: ["no such item in the caller's mailbox: unknown, another player's, or expired (`mailbox_item_not_found`)"],
    409: [
      'the inventory is full: open a chest first (`inventory_full`)',
      'the item was claimed already; `meta.chest_id` is the inventory chest (`mailbox_item_claimed`)',
    ],
    503: ["the app's content is not loaded yet (`content_unavailable`)"],
  },
};

import { periodicWorker, type Logger, type Pool, type Worker } from '@ccs/shared';
import { deleteExpiredItems } from '../repositories/mailbox-repo.js';

/**
 * Days an expired (or claimed) mailbox item is kept past its expiry before it is deleted. Until
 * then an expired item still stops a late re-delivery of its grant from adding the chest again,
 * and a claimed one still answers a second claim with 409 mailbox_item_claimed.
 */
export const MAILBOX_GRACE_DAYS = 30;

/**
 * Deletes mailbox items MAILBOX_GRACE_DAYS past their expiry: once at start, then daily. Expired
 * items are never listed nor claimable whether deleted or not; this only keeps the table small.
 * Replicas may all run it (the DELETE is idempotent).
 */
export function mailboxSweeper(pool: Pool, log: Logger, everyMs = 24 * 60 * 60 * 1000): Worker {
  return periodicWorker({ log, everyMs, what: 'expired mailbox items deleted', pass: () => deleteExpiredItems(pool, MAILBOX_GRACE_DAYS) });
}

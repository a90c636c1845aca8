import { describe, expect, it } from 'vitest';
import * as shared from '../src/index.js';
import { adminContentVersion, CONTENT_SERVICES } from '../src/contracts/admin.js';
import type { SubjectContract } from '../src/contracts/subject.js';

/**
 * The subjects that may change state. A read-only subject is bounded by the shorter
 * NATS_READ_TIMEOUT_MS, so a write marked read-only by mistake would be cut off while its work
 * still completes; this list makes every such marking a reviewed change.
 */
const WRITES = [
  'chests.v1.admin_grant_chests',
  'chests.v1.claim_mailbox_item',
  'chests.v1.open',
  'chests.v1.open_batch',
  'chests.v1.purchase',
  'chests.v1.pull_banner',
  'chests.v1.spark_banner',
  'chests.v1.rotate_seed',
  'chests.v1.unlock',
  'collections.v1.admin_cancel_trade',
  'collections.v1.dissolve',
  'collections.v1.offer_trade',
  'collections.v1.trade_action',
  'players.v1.add_friend',
  'players.v1.admin_create_app',
  'egress.v1.admin_create_webhook',
  'egress.v1.admin_delete_webhook',
  'egress.v1.admin_retry_webhook_delivery',
  'egress.v1.admin_update_webhook',
  'players.v1.admin_load_content',
  'players.v1.admin_lock_player',
  'players.v1.admin_record_audit',
  'players.v1.admin_revoke_sessions',
  'players.v1.admin_rotate_keys',
  'players.v1.admin_update_profile',
  'players.v1.create_guest',
  'players.v1.login',
  'players.v1.logout',
  'players.v1.refresh',
  'players.v1.register',
  'players.v1.remove_friend',
  'players.v1.update_me',
  'store.v1.admin_set_google_credentials',
  'store.v1.apple_notification',
  'store.v1.google_notification',
  'store.v1.verify_purchase',
  'wallet.v1.admin_credit',
  'wallet.v1.credit',
  'wallet.v1.debit',
  'wallet.v1.refund',
].sort();

function isSubject(value: unknown): value is SubjectContract {
  return typeof value === 'object' && value !== null && 'subject' in value && 'request' in value && 'reply' in value;
}

describe('read-only subjects', () => {
  const contracts: SubjectContract[] = [
    ...(Object.values(shared) as unknown[]).filter(isSubject),
    ...CONTENT_SERVICES.map((s) => adminContentVersion(s)),
  ];

  it('marks exactly the subjects that change nothing as read-only', () => {
    expect(contracts.length).toBeGreaterThan(30);
    const writes = contracts
      .filter((c) => !c.readOnly)
      .map((c) => c.subject)
      .sort();
    expect(writes).toEqual(WRITES);
  });

  it('bounds a read by the read timeout and a write by the request timeout', () => {
    const bus = new shared.Bus({} as never, '', 5000, { readTimeoutMs: 2000 });
    expect(bus.boundOf(shared.GetInventory)).toBe(2000);
    expect(bus.boundOf(shared.OpenChest)).toBe(5000);
    // The read bound never exceeds the write bound.
    expect(new shared.Bus({} as never, '', 1000, { readTimeoutMs: 2000 }).boundOf(shared.GetInventory)).toBe(1000);
  });
});

import { randomUUID } from 'node:crypto';
import { headers as natsHeaders } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AppliedNotices,
  ChestGrant,
  ClaimMailboxItem,
  encodeJson,
  GetInventory,
  ListMailbox,
  NOTIFY_HEADER,
  prefixed,
  readContentFile,
  StoreRefundApplied,
  type AppContent,
} from '@ccs/shared';
import { chestGrantFactory } from '@ccs/shared/testing';
import type { z } from 'zod';
import { STORE_REFUNDS_CONSUMER } from '../src/consumers/store-refunds.js';
import { callOf, chestsApp, chestsSql, grantedChests, openChest, startChestsTier, type ChestsTier } from './support/chests-tier.js';

type Refund = z.infer<typeof StoreRefundApplied.payload>;

/** The demo content with inventories of 2 chests, overflowing to the mailbox. */
function tinyContent(): AppContent {
  const c: AppContent = structuredClone(readContentFile());
  c.players.inventory_capacity = 2;
  c.players.inventory_overflow = 'mailbox';
  c.players.mailbox_ttl_days = 7;
  return c;
}

// Store refunds on the service tier: chests alone, the chests granted by ChestGrant messages and
// the refunds delivered as the store service publishes them (grants.store.refund on JetStream).
describe('store refunds revoke and restore chests (service tier)', () => {
  let tier: ChestsTier;
  let appId: string;
  let tinyApp: string;
  let notices: AppliedNotices;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    [{ appId }, { appId: tinyApp }] = await Promise.all([chestsApp(tier), chestsApp(tier, { content: tinyContent() })]);
    notices = new AppliedNotices(tier.nc, tier.config.NATS_PREFIX);
  });
  afterAll(async () => {
    notices?.close();
    await tier?.close();
  });

  /** A refund message of the purchase (a refund under revoke_then_debt unless told otherwise). */
  const refundOf = (app: string, playerId: string, purchaseId: string, chestIds: string[], over: Partial<Refund> = {}): Refund =>
    StoreRefundApplied.payload.parse({
      refundId: randomUUID(),
      appId: app,
      playerId,
      purchaseId,
      kind: 'refund',
      policy: 'revoke_then_debt',
      currencies: [],
      chestIds,
      ...over,
    });

  /**
   * Publishes a refund as the store's outbox relay does (Nats-Msg-Id: the refund id unless told),
   * asking for the applied notice, and waits for it: answers the notice chests left (undefined for
   * a message it found already applied).
   */
  async function deliver(refund: Refund, messageId = refund.refundId): Promise<unknown> {
    const wait = notices.expect(STORE_REFUNDS_CONSUMER, [messageId]);
    const h = natsHeaders();
    h.set('ccs-request-id', randomUUID());
    h.set(NOTIFY_HEADER, notices.subject);
    await tier.nc
      .jetstream()
      .publish(prefixed(tier.config.NATS_PREFIX, StoreRefundApplied.subject), encodeJson(refund), { msgID: messageId, headers: h });
    const seen = await wait.done(20_000);
    expect(seen.has(messageId), `refund ${messageId} applied`).toBe(true);
    return seen.get(messageId);
  }

  const inventoryOf = (app: string, playerId: string) =>
    tier.bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' }, callOf(app, playerId));
  const idsOf = async (app: string, playerId: string) => (await inventoryOf(app, playerId)).chests.map((c) => c.id).sort();
  const mailboxOf = (app: string, playerId: string) => tier.bus.request(ListMailbox, { page: { limit: 20, offset: 0 } }, callOf(app, playerId));
  const grantOne = (app: string, playerId: string, inventoryChestId = randomUUID()) =>
    tier.publishApplied(ChestGrant, chestGrantFactory(app, { playerId, inventoryChestId, chestTypeId: 'golden-chest', source: 'purchased' }), {
      timeoutMs: 20_000,
    });
  const revokedRows = (ids: string[]) =>
    chestsSql<{ id: string; refund_id: string; revoked_from: string | null; restored_at: Date | null; revoked_at: Date }>(
      tier,
      'SELECT id, refund_id, revoked_from, restored_at, revoked_at FROM revoked_chests WHERE id = ANY($1::uuid[]) ORDER BY id',
      [ids],
    );
  const notFound = { kind: 'not_found', errors: [{ code: 'chest_not_found' }] };

  it('revokes the unopened chests and keeps the opened one with its opening; the same refund again changes nothing more', async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { source: 'purchased', chestTypeId: 'golden-chest', n: 3 });
    const [opened, a, b] = chests as [string, string, string];
    const opening = await openChest(tier, appId, playerId, opened);
    const before = await inventoryOf(appId, playerId);
    expect(before.totalChests).toBe(2);

    const refund = refundOf(appId, playerId, randomUUID(), chests);
    expect(await deliver(refund)).toEqual({ revoked: 2, restored: 0 });

    const after = await inventoryOf(appId, playerId);
    expect(after.chests).toEqual([]);
    expect(after).toMatchObject({ totalChests: 0, bySource: { purchased: 0 } });
    await expect(openChest(tier, appId, playerId, a)).rejects.toMatchObject(notFound);
    // The opened chest stays opened, its opening as it was (the odds statistics count it).
    await expect(openChest(tier, appId, playerId, opened)).rejects.toMatchObject({ errors: [{ code: 'chest_already_opened' }] });
    expect(await chestsSql(tier, 'SELECT id FROM openings WHERE chest_id = $1', [opened])).toEqual([{ id: opening.openingId }]);
    const rows = await revokedRows(chests);
    expect(rows.map((r) => [r.id, r.refund_id, r.revoked_from, r.restored_at])).toEqual(
      [a, b].sort().map((id) => [id, refund.refundId, 'inventory', null]),
    );

    // Delivered again (another message id, past the stream's de-duplication): nothing more.
    expect(await deliver(refund, randomUUID())).toBeUndefined();
    expect(await revokedRows(chests)).toEqual(rows);
    expect((await inventoryOf(appId, playerId)).totalChests).toBe(0);
  });

  it('restores the revoked chests under their ids, as they were, on a reversal; a refund again revokes them again', async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { source: 'purchased', chestTypeId: 'golden-chest', n: 2 });
    const before = await inventoryOf(appId, playerId);
    const purchaseId = randomUUID();
    const first = refundOf(appId, playerId, purchaseId, chests);
    await deliver(first);
    expect(await idsOf(appId, playerId)).toEqual([]);

    const reversal = refundOf(appId, playerId, purchaseId, chests, { kind: 'reversal' });
    expect(await deliver(reversal)).toEqual({ revoked: 0, restored: 2 });
    expect(await inventoryOf(appId, playerId)).toEqual(before);
    expect((await revokedRows(chests)).every((r) => r.restored_at !== null)).toBe(true);
    // The reversal again: nothing more (already restored).
    expect(await deliver({ ...reversal, refundId: randomUUID() })).toEqual({ revoked: 0, restored: 0 });
    expect((await inventoryOf(appId, playerId)).totalChests).toBe(2);

    const second = refundOf(appId, playerId, purchaseId, chests);
    expect(await deliver(second)).toEqual({ revoked: 2, restored: 0 });
    expect(await idsOf(appId, playerId)).toEqual([]);
    expect((await revokedRows(chests)).map((r) => [r.refund_id, r.restored_at])).toEqual(chests.map(() => [second.refundId, null]));

    // A restored chest opens like any other.
    await deliver(refundOf(appId, playerId, purchaseId, chests, { kind: 'reversal' }));
    expect((await openChest(tier, appId, playerId, chests[0]!)).chestId).toBe(chests[0]);
  });

  it('revokes nothing under the debt policy', async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { source: 'purchased', chestTypeId: 'golden-chest', n: 2 });
    expect(await deliver(refundOf(appId, playerId, randomUUID(), chests, { policy: 'debt' }))).toEqual({ revoked: 0, restored: 0 });
    expect(await idsOf(appId, playerId)).toEqual([...chests].sort());
    expect(await revokedRows(chests)).toEqual([]);
  });

  it('keeps out a chest whose refund came before its grant, and a reversal brings it', async () => {
    const playerId = randomUUID();
    const { chests: held } = await grantedChests(tier, appId, { playerId, source: 'welcome' });
    const purchaseId = randomUUID();
    const chest = randomUUID();
    expect(await deliver(refundOf(appId, playerId, purchaseId, [chest]))).toEqual({ revoked: 1, restored: 0 });
    await grantOne(appId, playerId, chest);
    // Delivered twice (another message id): still nothing.
    await grantOne(appId, playerId, chest);
    expect(await idsOf(appId, playerId)).toEqual(held);
    await expect(openChest(tier, appId, playerId, chest)).rejects.toMatchObject(notFound);
    expect((await revokedRows([chest]))[0]).toMatchObject({ revoked_from: 'grant', restored_at: null });

    expect(await deliver(refundOf(appId, playerId, purchaseId, [chest], { kind: 'reversal' }))).toEqual({ revoked: 0, restored: 1 });
    const inv = await inventoryOf(appId, playerId);
    expect(inv.chests.find((c) => c.id === chest)).toMatchObject({ source: 'purchased', name: 'Golden Chest' });
  });

  it('lets the grant add a chest whose refund and reversal both came before it', async () => {
    const playerId = randomUUID();
    const purchaseId = randomUUID();
    const chest = randomUUID();
    await deliver(refundOf(appId, playerId, purchaseId, [chest]));
    expect(await deliver(refundOf(appId, playerId, purchaseId, [chest], { kind: 'reversal' }))).toEqual({ revoked: 0, restored: 1 });
    expect(await idsOf(appId, playerId)).toEqual([]);
    await grantOne(appId, playerId, chest);
    expect(await idsOf(appId, playerId)).toEqual([chest]);
    // Revoked once more, from the inventory this time.
    await deliver(refundOf(appId, playerId, purchaseId, [chest]));
    expect(await idsOf(appId, playerId)).toEqual([]);
    expect((await revokedRows([chest]))[0]).toMatchObject({ revoked_from: 'inventory', restored_at: null });
  });

  it('revokes a chest waiting in the mailbox; a reversal puts it where a grant would go', async () => {
    const { playerId, chests: full } = await grantedChests(tier, tinyApp, { source: 'welcome', n: 2 });
    const waiting = randomUUID();
    await grantOne(tinyApp, playerId, waiting);
    expect((await mailboxOf(tinyApp, playerId)).items.map((i) => i.id)).toEqual([waiting]);
    const purchaseId = randomUUID();
    expect(await deliver(refundOf(tinyApp, playerId, purchaseId, [waiting]))).toEqual({ revoked: 1, restored: 0 });
    expect(await mailboxOf(tinyApp, playerId)).toMatchObject({ items: [], total: 0 });
    await expect(tier.bus.request(ClaimMailboxItem, { itemId: waiting }, callOf(tinyApp, playerId))).rejects.toMatchObject({
      kind: 'not_found',
      errors: [{ code: 'mailbox_item_not_found' }],
    });

    // Still full: back to the mailbox.
    await deliver(refundOf(tinyApp, playerId, purchaseId, [waiting], { kind: 'reversal' }));
    expect((await mailboxOf(tinyApp, playerId)).items.map((i) => i.id)).toEqual([waiting]);
    // Claimed into the inventory, revoked from there, restored with room: the inventory.
    await openChest(tier, tinyApp, playerId, full[0]!);
    await tier.bus.request(ClaimMailboxItem, { itemId: waiting }, callOf(tinyApp, playerId));
    await deliver(refundOf(tinyApp, playerId, purchaseId, [waiting]));
    expect(await idsOf(tinyApp, playerId)).toEqual([full[1]!]);
    await deliver(refundOf(tinyApp, playerId, purchaseId, [waiting], { kind: 'reversal' }));
    expect(await idsOf(tinyApp, playerId)).toEqual([full[1]!, waiting].sort());
    expect((await mailboxOf(tinyApp, playerId)).total).toBe(0);
  });

  it('lets exactly one of an opening and a revocation of the same chest win, without skipping a nonce', async () => {
    const playerId = randomUUID();
    const outcomes = { opened: 0, revoked: 0 };
    for (let round = 0; round < 25; round++) {
      const {
        chests: [chest],
      } = await grantedChests(tier, appId, { playerId, source: 'purchased' });
      const refund = refundOf(appId, playerId, randomUUID(), [chest!]);
      const [open] = await Promise.allSettled([
        new Promise((r) => setTimeout(r, round % 5)).then(() => openChest(tier, appId, playerId, chest!)),
        deliver(refund),
      ]);
      const opening = await chestsSql(tier, 'SELECT 1 FROM openings WHERE chest_id = $1', [chest]);
      const inInventory = await chestsSql<{ opened: boolean }>(tier, 'SELECT opened_at IS NOT NULL AS opened FROM inventory_chests WHERE id = $1', [
        chest,
      ]);
      const revoked = await revokedRows([chest!]);
      if (open.status === 'fulfilled') {
        outcomes.opened++;
        expect(opening).toHaveLength(1);
        expect(inInventory).toEqual([{ opened: true }]);
        expect(revoked).toEqual([]);
      } else {
        outcomes.revoked++;
        expect(open.reason).toMatchObject(notFound);
        expect(opening).toHaveLength(0);
        expect(inInventory).toEqual([]);
        expect(revoked).toHaveLength(1);
      }
      // Every nonce of the pair is an opening: a lost race wrote nothing, not even the nonce.
      const [seed] = await chestsSql<{ next_nonce: number; openings: number }>(
        tier,
        `SELECT s.next_nonce, (SELECT count(*)::int FROM openings o WHERE o.seed_id = s.id) AS openings
           FROM player_seeds s WHERE s.app_id = $1 AND s.player_id = $2 AND s.revealed_at IS NULL`,
        [appId, playerId],
      );
      if (seed) expect(seed.next_nonce, `round ${round}`).toBe(seed.openings);
    }
    expect(outcomes.opened + outcomes.revoked).toBe(25);
  });
});

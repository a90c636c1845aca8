import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpeningGranted } from '@ccs/shared';
import { chestsApp, chestsSql, grantedChests, openChest, startChestsTier, type ChestsTier } from './support/chests-tier.js';

// Opening a chest on the service tier: chests alone, called over chests.v1.open. The HTTP
// rendering of the result, POST and GET, the gateway's validation, idempotency headers,
// read-your-writes through collections and the openings list are end to end:
// test/e2e/chests/opening.test.ts.
describe('opening a chest (service tier)', () => {
  let tier: ChestsTier;
  let appId: string;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    ({ appId } = await chestsApp(tier));
  });
  afterAll(async () => tier?.close());

  const openingsOf = (chestId: string) =>
    chestsSql<{ id: string; items: unknown[] }>(tier, 'SELECT id, items FROM openings WHERE chest_id = $1', [chestId]);

  it('answers 403 chest_already_opened the second time', async () => {
    const {
      playerId,
      chests: [chest],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    await openChest(tier, appId, playerId, chest!);
    const refused = { kind: 'forbidden', errors: [{ code: 'chest_already_opened' }] };
    await expect(openChest(tier, appId, playerId, chest!)).rejects.toMatchObject(refused);
    await expect(openChest(tier, appId, playerId, chest!, 'another-try')).rejects.toMatchObject(refused);
    expect(await openingsOf(chest!)).toHaveLength(1);
  });

  it("answers 404 when a player of another app opens this app's chest", async () => {
    const {
      playerId,
      chests: [chest],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    const { appId: other } = await chestsApp(tier);
    const { playerId: stranger } = await grantedChests(tier, other, { source: 'welcome' });
    await expect(openChest(tier, other, stranger, chest!)).rejects.toMatchObject({ kind: 'not_found', errors: [{ code: 'chest_not_found' }] });
    // The owner still holds it, unopened.
    expect(await openingsOf(chest!)).toHaveLength(0);
    expect((await openChest(tier, appId, playerId, chest!)).chestId).toBe(chest);
  });

  it('consumes a chest once under 50 concurrent opens: one 200, 49 × 403, one opening, one set of granted rows', async () => {
    const {
      playerId,
      chests: [chest],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => openChest(tier, appId, playerId, chest!)));
    const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(49);
    for (const e of refused) expect(e).toMatchObject({ kind: 'forbidden', errors: [{ code: 'chest_already_opened' }] });
    const openings = await openingsOf(chest!);
    expect(openings).toHaveLength(1);
    expect(openings[0]!.id).toBe(ok[0]!.openingId);
    // One grant message for collections, carrying the opening's items once.
    const grants = await chestsSql<{ payload: { openingId: string; items: unknown[] } }>(
      tier,
      "SELECT payload FROM outbox WHERE subject LIKE '%' || $1 AND payload->>'playerId' = $2",
      [OpeningGranted.subject, playerId],
    );
    expect(grants).toHaveLength(1);
    expect(grants[0]!.payload.openingId).toBe(ok[0]!.openingId);
    expect(grants[0]!.payload.items).toHaveLength(openings[0]!.items.length);
  });
});

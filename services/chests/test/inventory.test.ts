import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChestGrant, GetInventory, chestTypeId } from '@ccs/shared';
import { chestGrantFactory, loadedApp } from '@ccs/shared/testing';
import { callOf, chestsApp, chestsSql, grantedChests, startChestsTier, type ChestsTier } from './support/chests-tier.js';

// Chest grants landing in an inventory on the service tier: chests alone, the grants published as
// players or collections publish them. The inventory document, its pages and links, and who may
// see it (players' privacy and friendships) are end to end: test/e2e/chests/inventory.test.ts.
describe('player chest inventory (service tier)', () => {
  let tier: ChestsTier;
  let appId: string;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    ({ appId } = await chestsApp(tier));
  });
  afterAll(async () => tier?.close());

  it('applies a chest grant once, even when delivered again, with its type and source', async () => {
    const { playerId } = await grantedChests(tier, appId, { source: 'welcome' });
    const chestId = randomUUID();
    const grant = chestGrantFactory(appId, { playerId, inventoryChestId: chestId, chestTypeId: 'golden-chest', source: 'special' });
    // Three deliveries, each its own message: the same grant twice, then with the type's catalog id.
    await tier.publishApplied(ChestGrant, grant);
    await tier.publishApplied(ChestGrant, grant);
    await tier.publishApplied(ChestGrant, { ...grant, chestTypeId: chestTypeId(appId, 'golden-chest') });
    const inv = await tier.bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' }, callOf(appId, playerId));
    expect(inv.totalChests).toBe(2);
    expect(inv.bySource).toEqual({ purchased: 0, earned: 0, welcome: 1, special: 1 });
    expect(inv.estimatedValue).toEqual({ coins: 500, gems: 50, vault_key: 0 });
    expect(inv.chests.find((c) => c.id === chestId)).toMatchObject({
      name: 'Golden Chest',
      source: 'special',
      chestTypeId: chestTypeId(appId, 'golden-chest'),
    });
    expect(await chestsSql(tier, 'SELECT id FROM inventory_chests WHERE id = $1', [chestId])).toHaveLength(1);
  });

  it("retries a grant that arrives before its app's content, and applies it once the content is there", async () => {
    const lateApp = randomUUID();
    const chestId = randomUUID();
    // No chest type: the app's starter chest type, known only with the app's content.
    const { chestTypeId: _starter, ...grant } = chestGrantFactory(lateApp, { inventoryChestId: chestId, source: 'welcome' });
    await tier.publish(ChestGrant, grant);
    await new Promise((r) => setTimeout(r, 700));
    expect(await chestsSql(tier, 'SELECT id FROM inventory_chests WHERE id = $1', [chestId])).toHaveLength(0);
    await loadedApp(tier, { appId: lateApp });
    await expect
      .poll(() => chestsSql<{ chest_type_id: string }>(tier, 'SELECT chest_type_id FROM inventory_chests WHERE id = $1', [chestId]), {
        timeout: 20_000,
      })
      .toEqual([{ chest_type_id: chestTypeId(lateApp, 'wooden-chest') }]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListOpenings, type OpeningView } from '@ccs/shared';
import { callOf, chestsApp, chestsSql, grantedChests, openChest, startChestsTier, type ChestsTier } from './support/chests-tier.js';

describe('the openings audit (service tier)', () => {
  let tier: ChestsTier;
  let appId: string;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    ({ appId } = await chestsApp(tier));
  });
  afterAll(async () => tier?.close());

  it('lists each opening with its rules version, fairness inputs and pity before and after', async () => {
    const {
      playerId,
      chests: [starter],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    const {
      chests: [silver],
    } = await grantedChests(tier, appId, { playerId, chestTypeId: 'silver-chest', source: 'purchased' });
    const first = await openChest(tier, appId, playerId, starter!);
    const second = await openChest(tier, appId, playerId, silver!);
    const listed = await tier.bus.request(ListOpenings, { page: { limit: 10, offset: 0 } }, callOf(appId, playerId));
    const [newest, oldest] = listed.openings as [OpeningView, OpeningView];
    expect(listed.total).toBe(2);
    expect(newest.openingId).toBe(second.openingId);
    expect(newest).toMatchObject({
      rulesVersion: 1,
      fairness: { ...second.fairness, nonce: 1 },
      pity: { group: 'silver-chest', rarity: 'legendary', opensSinceBefore: 0, triggered: false },
    });
    expect(oldest).toMatchObject({ fairness: { ...first.fairness, nonce: 0 } });
    expect(oldest.pity).toBeUndefined();
  });

  it('keeps openings OPENINGS_RETENTION_DAYS (365) and deletes older ones, keeping their chests opened', async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { n: 2 });
    const kept = (await openChest(tier, appId, playerId, chests[0]!)).openingId;
    const old = (await openChest(tier, appId, playerId, chests[1]!)).openingId;
    await chestsSql(tier, "UPDATE openings SET opened_at = now() - interval '364 days' WHERE id = $1", [kept]);
    await chestsSql(tier, "UPDATE openings SET opened_at = now() - interval '366 days' WHERE id = $1", [old]);
    // The sweep runs when the service starts, then daily.
    await tier.stopService();
    await tier.startService();
    await expect.poll(() => chestsSql(tier, 'SELECT id FROM openings WHERE id = $1', [old]), { timeout: 10_000 }).toHaveLength(0);
    expect(await chestsSql(tier, 'SELECT id FROM openings WHERE id = $1', [kept])).toHaveLength(1);
    // The chest stays consumed: it cannot be opened again.
    await expect(openChest(tier, appId, playerId, chests[1]!)).rejects.toMatchObject({ errors: [{ code: 'chest_already_opened' }] });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenChest, OpenChests, type OpeningView, type ReplyOf } from '@ccs/shared';
import { callOf, chestsApp, chestsSql, grantedChests, openChest, startChestsTier, type ChestsTier } from './support/chests-tier.js';

// Batch open on the service tier: chests alone, called over chests.v1.open_batch. The rendered
// batch, its grants applied by collections and the gateway's validation (422 for an empty batch
// or more than 50 chests) are end to end: test/e2e/chests/batch-open.test.ts.
describe('batch open (service tier)', () => {
  let tier: ChestsTier;
  let appId: string;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    ({ appId } = await chestsApp(tier));
  });
  afterAll(async () => tier?.close());

  const openMany = (playerId: string, chestIds: string[], idempotencyKey?: string) =>
    tier.bus.request(OpenChests, { chestIds, ...(idempotencyKey ? { idempotencyKey } : {}) }, callOf(appId, playerId));
  const opened = (ids: string[]) =>
    chestsSql<{ id: string }>(tier, 'SELECT id FROM inventory_chests WHERE id = ANY($1::uuid[]) AND opened_at IS NOT NULL', [ids]);
  const refusal = (kind: string, code: string | undefined, pointer?: string) => ({
    kind,
    errors: [{ ...(code ? { code } : {}), ...(pointer ? { source: { pointer } } : {}) }],
  });

  it("opens once under the gateway's retry key: a repeat of the request (single or batch) answers the same openings", async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { n: 3 });
    const retryKey = randomUUID();
    const one = () => tier.bus.request(OpenChest, { chestId: chests[0]!, retryKey }, callOf(appId, playerId));
    const [a, b] = await Promise.all([one(), one()]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(a.openingId).toBe(b.openingId);
    const batchKey = randomUUID();
    const batch = () => tier.bus.request(OpenChests, { chestIds: chests.slice(1), retryKey: batchKey }, callOf(appId, playerId));
    const first = await batch();
    const again = await batch();
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    expect(again.openings.map((o) => o.openingId)).toEqual(first.openings.map((o) => o.openingId));
    const rows = await chestsSql<{ n: number }>(tier, 'SELECT count(*)::int AS n FROM openings WHERE chest_id = ANY($1::uuid[])', [chests]);
    expect(rows[0]!.n).toBe(3);
  });

  it('counts each opening of a batch as a single open is counted: opened, then granted or grant_pending (the grants wait in the tier)', async () => {
    const outcomes = async () => {
      const metric = await tier.service.deps.metrics.registry.getSingleMetric('ccs_saga_outcomes_total')!.get();
      const count = (outcome: string) => metric.values.find((v) => v.labels.saga === 'opening' && v.labels.outcome === outcome)?.value ?? 0;
      return { opened: count('opened'), granted: count('granted'), pending: count('grant_pending') };
    };
    const { playerId, chests } = await grantedChests(tier, appId, { n: 4 });
    const before = await outcomes();
    await openMany(playerId, chests.slice(0, 3));
    await openChest(tier, appId, playerId, chests[3]!);
    const after = await outcomes();
    expect({ opened: after.opened - before.opened, granted: after.granted - before.granted, pending: after.pending - before.pending }).toEqual({
      opened: 4,
      granted: 0,
      pending: 4,
    });
  });

  it('opens nothing when one chest cannot be opened, and names it', async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { n: 5 });
    await openChest(tier, appId, playerId, chests[3]!);
    await expect(openMany(playerId, chests)).rejects.toMatchObject(refusal('forbidden', 'chest_already_opened', '/data/3/id'));
    expect(await opened(chests)).toHaveLength(1);

    const {
      chests: [notMine],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    await expect(openMany(playerId, [chests[0]!, notMine!])).rejects.toMatchObject(refusal('forbidden', 'chest_not_owned', '/data/1/id'));
    await expect(openMany(playerId, [randomUUID()])).rejects.toMatchObject(refusal('not_found', 'chest_not_found', '/data/0/id'));
    await expect(openMany(playerId, [chests[0]!, chests[0]!])).rejects.toMatchObject(refusal('invalid', 'duplicate_chest', '/data/1/id'));
    // An empty batch and one of 51 chests never reach chests (the contract refuses them before
    // sending): the gateway's 422 for them is in the end-to-end case of the same name.
    expect(await opened(chests)).toHaveLength(1);
    expect(await opened([notMine!])).toHaveLength(0);
  });

  it('answers a retry with its Idempotency-Key with the first batch, and refuses the key with other chests', async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { n: 4 });
    const key = `batch-${randomUUID()}`;
    const [a, b] = await Promise.all([openMany(playerId, chests.slice(0, 3), key), openMany(playerId, chests.slice(0, 3), key)]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    // A replay racing the first request may answer before collections applied the grants: the
    // duplicate conversions, known only then, are the one thing it may not show yet.
    const known = (r: ReplyOf<typeof OpenChests>) =>
      r.openings.map(({ conversions: _c, items, ...o }: OpeningView) => ({ ...o, items: items.map(({ converted: _v, ...i }) => i) }));
    expect(known(b)).toEqual(known(a));
    const [openings] = await chestsSql<{ n: number }>(tier, 'SELECT count(*)::int AS n FROM openings WHERE chest_id = ANY($1::uuid[])', [chests]);
    expect(openings!.n).toBe(3);
    await expect(openMany(playerId, [chests[3]!], key)).rejects.toMatchObject(refusal('conflict', 'idempotency_key_reused'));
  });

  it('carries pity through the batch as through single openings, and races single opens without losing or doubling a chest', async () => {
    const { playerId, chests } = await grantedChests(tier, appId, { chestTypeId: 'silver-chest', n: 30 });
    const singles = chests.slice(20, 25);
    const [batch, ...alone] = await Promise.allSettled([
      openMany(playerId, chests.slice(0, 25)),
      ...singles.map((id) => openChest(tier, appId, playerId, id)),
    ]);
    const singleOk = alone.filter((r) => r.status === 'fulfilled').length;
    if (batch!.status === 'fulfilled') {
      expect(singleOk).toBe(0);
      let counter = 0;
      for (const o of (batch!.value as ReplyOf<typeof OpenChests>).openings) {
        expect(o.pity!.opensSinceBefore).toBe(counter);
        counter = o.pity!.opensSinceAfter;
      }
      expect(await opened(chests)).toHaveLength(25);
    } else {
      expect(batch!.reason).toMatchObject(refusal('forbidden', 'chest_already_opened'));
      expect(singleOk).toBeGreaterThan(0);
      expect(await opened(chests)).toHaveLength(singleOk);
    }
    // Whatever won, each chest was consumed at most once, by exactly one opening.
    const rows = await chestsSql<{ chest_id: string; n: number }>(
      tier,
      'SELECT chest_id, count(*)::int AS n FROM openings WHERE chest_id = ANY($1::uuid[]) GROUP BY chest_id',
      [chests],
    );
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect((await openMany(playerId, chests.slice(25))).openings).toHaveLength(5);
  });
});

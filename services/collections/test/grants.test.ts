import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { GetCollectible, GetCollection, GetPlayerCollection, grantsStream, OpeningGranted, watchApplied } from '@ccs/shared';
import { OPENINGS_CONSUMER } from '../src/consumers/opening-granted.js';
import { asPlayer, collectionsDb, grantAndWait, openingGrant, startCollectionsTier, type CollectionsTier } from './support/collections-tier.js';

const relic = (collectibleId: string) => ({ collectibleId, collectionId: 'ancient-relics' });
const sea = (collectibleId: string) => ({ collectibleId, collectionId: 'sea-creatures' });

/**
 * The service tier: collections alone over its own database and NATS prefix, its grants published
 * on the stream as the chests relay does, its answers read over its own contracts.
 */
describe('grants of chest openings', () => {
  let tier: CollectionsTier;
  let appId: string;
  let db: pg.Client;

  beforeAll(async () => {
    ({ tier, appId } = await startCollectionsTier());
    db = await collectionsDb(tier);
  });
  afterAll(async () => {
    await db?.end();
    await tier?.close();
  });

  const rowsOf = async (openingId: string) =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM owned_collectibles WHERE opening_id = $1', [openingId])).rows[0]!.n;
  const ownedCount = async (playerId: string, collectibleId: string) =>
    (await tier.bus.request(GetCollectible, { collectibleId, includeCollection: false }, asPlayer(appId, playerId))).ownership?.ownedCount;
  const collectionOf = (playerId: string) => tier.bus.request(GetPlayerCollection, { page: { limit: 100, offset: 0 } }, asPlayer(appId, playerId));
  const publishAs = (grant: Parameters<typeof grantAndWait>[1], id: string) => tier.publish(OpeningGranted, grant, { id });

  it('applies a grant delivered twice only once, whether or not the stream de-duplicates it', async () => {
    const player = randomUUID();
    const grant = openingGrant(appId, player, [relic('ancient-sun-disk'), relic('ancient-jade-scarab')]);
    await grantAndWait(tier, grant);
    // The same message again inside the duplicate window: the stream drops it.
    const again = await publishAs(grant, grant.openingId);
    expect(again.duplicate).toBe(true);
    // The same opening under another message id (a re-publish the stream cannot recognise).
    const watch = watchApplied(tier.nc, tier.config.NATS_PREFIX, ['other-id-' + grant.openingId], OPENINGS_CONSUMER);
    await publishAs(grant, 'other-id-' + grant.openingId);
    expect((await watch.done(10_000)).size).toBe(1);
    expect(await rowsOf(grant.openingId)).toBe(2);
    expect(await ownedCount(player, 'ancient-sun-disk')).toBe(1);
  });

  it("applies a grant re-delivered after JetStream's duplicate window only once", async () => {
    const player = randomUUID();
    const grant = openingGrant(appId, player, [sea('sea-octopus')]);
    await grantAndWait(tier, grant);
    const stream = grantsStream(tier.config.NATS_PREFIX);
    const jsm = tier.service.deps.jsm;
    const info = await jsm.streams.info(stream);
    const original = info.config.duplicate_window;
    await jsm.streams.update(stream, { ...info.config, duplicate_window: 100 * 1e6 });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const watch = watchApplied(tier.nc, tier.config.NATS_PREFIX, [grant.openingId], OPENINGS_CONSUMER);
      const ack = await publishAs(grant, grant.openingId);
      // Past the window the stream stores it again, so the consumer really sees it twice.
      expect(ack.duplicate).toBe(false);
      expect((await watch.done(10_000)).size).toBe(1);
    } finally {
      await jsm.streams.update(stream, { ...info.config, duplicate_window: original });
    }
    expect(await rowsOf(grant.openingId)).toBe(1);
    expect(await ownedCount(player, 'sea-octopus')).toBe(1);
    // The per-player tally counted the item once too.
    const tally = await db.query('SELECT copies FROM player_collectibles WHERE player_id = $1 AND collectible_id = $2', [player, 'sea-octopus']);
    expect(tally.rows).toEqual([{ copies: 1 }]);
  });

  it('counts duplicates of a collectible instead of losing them, and unique items once', async () => {
    const player = randomUUID();
    await grantAndWait(
      tier,
      openingGrant(appId, player, [relic('ancient-golden-mask'), relic('ancient-golden-mask'), relic('ancient-clay-amulet')]),
      openingGrant(appId, player, [relic('ancient-golden-mask')]),
    );
    expect(await ownedCount(player, 'ancient-golden-mask')).toBe(3);
    const collection = await tier.bus.request(GetCollection, { collectionId: 'ancient-relics', includeCollectibles: false }, asPlayer(appId, player));
    expect(collection.completeness).toEqual({ totalItems: 12, uniqueItems: 2, completionRate: 0.1666 });
    expect(await collectionOf(player)).toMatchObject({ total: 2, totalCopies: 4 });
  });

  it('applies every one of 20 grants published while the service was stopped exactly once after it restarts', async () => {
    const player = randomUUID();
    await tier.stopService();
    const relics = ['ancient-clay-amulet', 'ancient-bronze-coin', 'ancient-carved-totem'];
    const grants = Array.from({ length: 20 }, () => openingGrant(appId, player, relics.map(relic)));
    for (const g of grants) await publishAs(g, g.openingId);
    // Meanwhile reads fail fast with a clear 503 instead of hanging.
    await expect(collectionOf(player)).rejects.toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
    const watch = watchApplied(
      tier.nc,
      tier.config.NATS_PREFIX,
      grants.map((g) => g.openingId),
      OPENINGS_CONSUMER,
    );
    await tier.startService();
    expect((await watch.done(20_000)).size).toBe(20);
    const counts = await db.query<{ opening_id: string; n: number }>(
      'SELECT opening_id, count(*)::int AS n FROM owned_collectibles WHERE opening_id = ANY($1::uuid[]) GROUP BY opening_id',
      [grants.map((g) => g.openingId)],
    );
    expect(counts.rows).toHaveLength(20);
    expect(counts.rows.every((r) => r.n === 3)).toBe(true);
    // The demo content keeps 3 copies of a collectible (duplicates.max_copies); the other 17 of each are converted.
    expect(await ownedCount(player, 'ancient-bronze-coin')).toBe(3);
    expect(await collectionOf(player)).toMatchObject({ total: 3, totalCopies: 9 });
    const converted = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM owned_collectibles WHERE opening_id = ANY($1::uuid[]) AND converted_currency IS NOT NULL',
      [grants.map((g) => g.openingId)],
    );
    expect(converted.rows[0]!.n).toBe(51);
  });
});

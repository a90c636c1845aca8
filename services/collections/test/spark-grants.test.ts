import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import { GetCollectible, SparkGranted, watchApplied } from '@ccs/shared';
import { SPARKS_CONSUMER } from '../src/consumers/spark-granted.js';
import { asPlayer, collectionsDb, grantAndWait, openingGrant, startCollectionsTier, type CollectionsTier } from './support/collections-tier.js';

type Spark = z.infer<typeof SparkGranted.payload>;

/**
 * A banner's spark exchange reaches collections as its own message kind (grants.sparks.granted,
 * durable collections-sparks): its collectible is added once per exchange, as an opening's item
 * would be (duplicate rules, completions and their rewards).
 */
describe('grants of spark exchanges', () => {
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

  const sparkOf = (playerId: string, collectibleId: string, collectionId: string, rarity: string): Spark => ({
    exchangeId: randomUUID(),
    appId,
    playerId,
    bannerId: 'kraken-rising',
    collectibleId,
    collectionId,
    rarity,
    exchangedAt: new Date().toISOString(),
    rulesVersion: 1,
  });
  /** Publishes a spark's grant under `id` (default the exchange id, as the chests relay does) and waits until collections applied it. */
  const sparkAndWait = async (spark: Spark, id = spark.exchangeId) => {
    const watch = watchApplied(tier.nc, tier.config.NATS_PREFIX, [id], SPARKS_CONSUMER);
    await tier.publish(SparkGranted, spark, { id });
    expect((await watch.done(15_000)).size, `spark ${id} applied`).toBe(1);
  };
  const rowsOf = async (exchangeId: string) =>
    (
      await db.query<{ slot: number; collectible_id: string; converted_currency: string | null }>(
        'SELECT slot, collectible_id, converted_currency FROM owned_collectibles WHERE opening_id = $1',
        [exchangeId],
      )
    ).rows;
  const ownedCount = async (playerId: string, collectibleId: string) =>
    (await tier.bus.request(GetCollectible, { collectibleId, includeCollection: false }, asPlayer(appId, playerId))).ownership?.ownedCount;

  it('adds the exchanged collectible once, however often the exchange is delivered', async () => {
    const player = randomUUID();
    const spark = sparkOf(player, 'sea-kraken', 'sea-creatures', 'legendary');
    await sparkAndWait(spark);
    // The same exchange re-published under another message id (the stream cannot recognise it).
    await sparkAndWait(spark, `again-${spark.exchangeId}`);
    expect(await rowsOf(spark.exchangeId)).toEqual([{ slot: 0, collectible_id: 'sea-kraken', converted_currency: null }]);
    expect(await ownedCount(player, 'sea-kraken')).toBe(1);
  });

  it("judges the collectible by the exchange's duplicate rules: past max_copies it is converted", async () => {
    const player = randomUUID();
    const mask = { collectibleId: 'ancient-golden-mask', collectionId: 'ancient-relics', rarity: 'rare' };
    await grantAndWait(tier, openingGrant(appId, player, [mask, mask, mask]));
    const spark = sparkOf(player, mask.collectibleId, mask.collectionId, mask.rarity);
    await sparkAndWait(spark);
    expect(await rowsOf(spark.exchangeId)).toEqual([{ slot: 0, collectible_id: 'ancient-golden-mask', converted_currency: 'coins' }]);
    expect(await ownedCount(player, 'ancient-golden-mask')).toBe(3);
  });

  it('completes a collection whose last collectible the exchange gives, with its reward', async () => {
    const player = randomUUID();
    const forest = [
      'enchanted-acorn-charm',
      'enchanted-glowcap-mushroom',
      'enchanted-fern-sprite',
      'enchanted-moss-stone',
      'enchanted-owl-totem',
      'enchanted-pixie-lantern',
      'enchanted-willow-wand',
      'enchanted-moonflower',
      'enchanted-dryad-circlet',
      'enchanted-ancient-seed',
      'enchanted-elder-treant-bark',
    ];
    await grantAndWait(
      tier,
      openingGrant(
        appId,
        player,
        forest.map((collectibleId) => ({ collectibleId, collectionId: 'enchanted-forest' })),
      ),
    );
    const completions = () =>
      db.query<{ collection_id: string; reward: unknown }>('SELECT collection_id, reward FROM collection_completions WHERE player_id = $1', [player]);
    expect((await completions()).rows).toEqual([]);
    await sparkAndWait(sparkOf(player, 'enchanted-heartwood-staff', 'enchanted-forest', 'legendary'));
    const done = (await completions()).rows;
    expect(done.map((c) => c.collection_id)).toEqual(['enchanted-forest']);
    expect(done[0]!.reward).toMatchObject({ currencies: { gems: 50 }, chests: ['golden-chest'] });
  });
});

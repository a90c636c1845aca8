import { randomUUID } from 'node:crypto';
import {
  appOf,
  callerOf,
  DURABLE,
  endpoint,
  insertOutboxMessages,
  isUniqueViolation,
  OpeningGranted,
  outboxMessage,
  publishAndAwait,
  SparkBanner,
  withTransaction,
  type ReplyOf,
} from '@ccs/shared';
import { currentContent, findBanner, isActive, type Banner } from '../banners/banners.js';
import { bannerErrors } from '../banners/errors.js';
import type { ChestsDeps } from '../deps.js';
import { findSparkExchange, insertSparkExchange, takeSparkPoints } from '../repositories/banners-repo.js';

type SparkReply = ReplyOf<typeof SparkBanner>;

/**
 * chests.v1.spark_banner (DESIGN.md §8): `spark.cost` of the player's spark points in the banner's
 * pity group for one of the banner's featured collectibles, in ONE transaction: the points taken only while enough are left
 * (a conditional UPDATE, so racing exchanges cannot spend the same points twice), the exchange
 * recorded, and the collectible's grant written to the outbox (an OpeningGranted of `source:
 * spark`, its id the exchange's: collections applies it exactly once). Until the banner's end;
 * the Idempotency-Key answers the first exchange again.
 */
export function sparkBannerEndpoint(deps: ChestsDeps) {
  return endpoint(SparkBanner, async (req, ctx): Promise<SparkReply> => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const banner = await findBanner(deps, appId, req.bannerId);
    if (!banner) throw bannerErrors.bannerNotFound();
    if (req.idempotencyKey) {
      const first = await replayOf(deps, appId, playerId, banner, req);
      if (first) return first;
    }
    const spark = banner.content.spark;
    if (!spark) throw bannerErrors.noSpark();
    if (!banner.content.featured.collectibles.includes(req.collectibleId)) throw bannerErrors.notFeatured(banner);
    const now = new Date();
    if (!isActive(banner, now)) throw bannerErrors.bannerNotActive(banner, now);
    const content = await currentContent(deps, appId);
    const collectible = content?.collectibles.find((c) => c.id === req.collectibleId);
    if (!collectible) throw bannerErrors.notFeatured(banner);

    const exchangeId = randomUUID();
    const createdAt = now.toISOString();
    const grant = outboxMessage(
      OpeningGranted,
      exchangeId,
      {
        openingId: exchangeId,
        appId,
        playerId,
        chestTypeId: banner.chestTypeId,
        openedAt: createdAt,
        experience: 0,
        rulesVersion: content!.version,
        items: [{ slot: 0, collectibleId: collectible.id, collectionId: collectible.collection_id, rarity: collectible.rarity }],
        source: 'spark',
        bannerId: banner.id,
      },
      ctx,
      { notify: deps.notices.subject },
    );
    let pointsAfter: number;
    try {
      pointsAfter = await withTransaction(deps.pool, async (tx) => {
        const taken = await takeSparkPoints(tx, appId, playerId, banner.group, spark.cost);
        if (!taken.ok) throw bannerErrors.sparkPointsInsufficient(taken.points, spark.cost);
        await insertSparkExchange(tx, {
          id: exchangeId,
          appId,
          playerId,
          banner: banner.id,
          group: banner.group,
          collectibleId: collectible.id,
          cost: spark.cost,
          pointsAfter: taken.points,
          idempotencyKey: req.idempotencyKey,
        });
        await insertOutboxMessages(tx, [grant]);
        return taken.points;
      });
    } catch (err) {
      // A racing request with the same key exchanged first: its answer (nothing of this one was written).
      if (req.idempotencyKey && isUniqueViolation(err, 'spark_exchanges_idempotency')) {
        const first = await replayOf(deps, appId, playerId, banner, req);
        if (first) return first;
      }
      throw err;
    }
    const seen = await publishAndAwait(deps, [grant], { durable: DURABLE.collectionsOpenings, timeoutMs: deps.config.GRANT_WAIT_MS });
    return {
      exchangeId,
      bannerId: banner.id,
      collectibleId: collectible.id,
      cost: spark.cost,
      createdAt,
      sparkPointsAfter: pointsAfter,
      granted: seen.has(exchangeId),
      replayed: false,
    };
  });
}

/** The exchange made before with the request's Idempotency-Key: its answer again, or 409 when the key exchanged something else. */
async function replayOf(
  deps: ChestsDeps,
  appId: string,
  playerId: string,
  banner: Banner,
  req: { collectibleId: string; idempotencyKey?: string },
): Promise<SparkReply | undefined> {
  const first = await findSparkExchange(deps.pool, appId, playerId, req.idempotencyKey!);
  if (!first) return undefined;
  if (first.banner !== banner.id || first.collectibleId !== req.collectibleId) throw bannerErrors.sparkKeyReused();
  return {
    exchangeId: first.id,
    bannerId: first.banner,
    collectibleId: first.collectibleId,
    cost: first.cost,
    createdAt: first.createdAt,
    sparkPointsAfter: first.pointsAfter,
    granted: true,
    replayed: true,
  };
}

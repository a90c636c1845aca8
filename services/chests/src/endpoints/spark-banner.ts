import { randomUUID } from 'node:crypto';
import {
  appOf,
  callerOf,
  DURABLE,
  endpoint,
  insertOutboxMessages,
  isUniqueViolation,
  outboxMessage,
  publishAndAwait,
  SparkBanner,
  SparkGranted,
  withTransaction,
  type CallContext,
  type OutboxMessage,
  type ReplyOf,
} from '@ccs/shared';
import { currentContent, findBanner, isActive, type Banner } from '../banners/banners.js';
import { bannerErrors } from '../errors.js';
import type { ChestsDeps } from '../deps.js';
import { findSparkExchange, insertSparkExchange, takeSparkPoints } from '../repositories/banners-repo.js';

type SparkReply = ReplyOf<typeof SparkBanner>;

/**
 * chests.v1.spark_banner (docs/design.md §8): `spark.cost` of the player's spark points in the banner's
 * pity group for one of the banner's featured collectibles, in ONE transaction: the points taken only while enough are left
 * (a conditional UPDATE, so racing exchanges cannot spend the same points twice), the exchange
 * recorded, and the collectible's grant written to the outbox (a SparkGranted, its id the
 * exchange's: collections applies it exactly once, egress sends banner.sparked). Until the banner's end;
 * the Idempotency-Key answers the first exchange again.
 */
export function sparkBannerEndpoint(deps: ChestsDeps) {
  return endpoint(SparkBanner, async (req, ctx): Promise<SparkReply> => {
    const who = { appId: appOf(ctx), playerId: callerOf(ctx) };
    const banner = await findBanner(deps, who.appId, req.bannerId);
    if (!banner) throw bannerErrors.bannerNotFound();
    if (req.idempotencyKey) {
      const first = await replayOf(deps, who.appId, who.playerId, banner, req);
      if (first) return first;
    }
    const offer = await checkSpark(deps, who.appId, banner, req.collectibleId);
    const exchange = { id: randomUUID(), createdAt: new Date().toISOString() };
    const grant = sparkGrant(deps, { ...who, banner, exchange, offer }, ctx);
    let pointsAfter: number;
    try {
      pointsAfter = await withTransaction(deps.pool, async (tx) => {
        const taken = await takeSparkPoints(tx, who.appId, who.playerId, banner.group, offer.cost);
        if (!taken.ok) throw bannerErrors.sparkPointsInsufficient(taken.points, offer.cost);
        await insertSparkExchange(tx, {
          ...who,
          id: exchange.id,
          banner: banner.id,
          group: banner.group,
          collectibleId: offer.collectible.id,
          cost: offer.cost,
          pointsAfter: taken.points,
          idempotencyKey: req.idempotencyKey,
        });
        await insertOutboxMessages(tx, [grant]);
        return taken.points;
      });
    } catch (err) {
      // A racing request with the same key exchanged first: its answer (nothing of this one was written).
      const first =
        req.idempotencyKey && isUniqueViolation(err, 'spark_exchanges_idempotency')
          ? await replayOf(deps, who.appId, who.playerId, banner, req)
          : undefined;
      if (first) return first;
      throw err;
    }
    const seen = await publishAndAwait(deps, [grant], { durable: DURABLE.collectionsSparks, timeoutMs: deps.config.GRANT_WAIT_MS });
    return {
      exchangeId: exchange.id,
      bannerId: banner.id,
      collectibleId: offer.collectible.id,
      cost: offer.cost,
      createdAt: exchange.createdAt,
      sparkPointsAfter: pointsAfter,
      granted: seen.has(exchange.id),
      replayed: false,
    };
  });
}

/** What a spark may take on this banner now: its cost and the chosen featured collectible (409 no spark or not running, 422 not featured). */
async function checkSpark(deps: ChestsDeps, appId: string, banner: Banner, collectibleId: string) {
  const spark = banner.content.spark;
  if (!spark) throw bannerErrors.noSpark();
  if (!banner.content.featured.collectibles.includes(collectibleId)) throw bannerErrors.notFeatured(banner);
  const now = new Date();
  if (!isActive(banner, now)) throw bannerErrors.bannerNotActive(banner, now);
  const content = await currentContent(deps, appId);
  const collectible = content?.collectibles.find((c) => c.id === collectibleId);
  if (!content || !collectible) throw bannerErrors.notFeatured(banner);
  return { cost: spark.cost, collectible, version: content.version };
}

/** The exchange's grant (SparkGranted), its id the exchange's. */
function sparkGrant(
  deps: ChestsDeps,
  e: {
    appId: string;
    playerId: string;
    banner: Banner;
    exchange: { id: string; createdAt: string };
    offer: Awaited<ReturnType<typeof checkSpark>>;
  },
  ctx: CallContext,
): OutboxMessage {
  const c = e.offer.collectible;
  return outboxMessage(
    SparkGranted,
    e.exchange.id,
    {
      exchangeId: e.exchange.id,
      appId: e.appId,
      playerId: e.playerId,
      bannerId: e.banner.id,
      collectibleId: c.id,
      collectionId: c.collection_id,
      rarity: c.rarity,
      exchangedAt: e.exchange.createdAt,
      rulesVersion: e.offer.version,
    },
    ctx,
    { notify: deps.notices.subject },
  );
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

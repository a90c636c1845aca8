import { randomUUID } from 'node:crypto';
import { insertOutboxMessages, outboxMessage, periodicWorker, WalletCreditGrant, withTransaction, type OutboxMessage, type Worker } from '@ccs/shared';
import { findBanner, type Banner } from '../banners/banners.js';
import type { ChestsDeps } from '../deps.js';
import { endedSparkBanners, settleSparkPoints } from '../repositories/banners-repo.js';

/** Players' points settled per transaction. */
const BATCH = 500;

/**
 * Spark points left at a banner's end (DESIGN.md §8): each pass finds the banners with unsettled
 * points whose window has closed and settles them, a batch of players per transaction: the points
 * set to 0 and kept as `settled_points`, and, when the banner's `spark.currency` is set, one wallet
 * credit per player (reason `spark_conversion`, one unit of the currency per point) written to the
 * outbox in the same transaction, so a point converts exactly once whatever crashes (the credit's
 * message id is its outbox row's, which wallet applies once). Without a currency they lapse.
 * Replicas may all run it: a row is settled by one transaction only (SKIP LOCKED, then the
 * `settled_at IS NULL` guard). A banner no longer in the app's content is left as it is.
 */
export function sparkSettlement(deps: ChestsDeps, everyMs = deps.config.SPARK_SETTLE_INTERVAL_MS): Worker {
  return periodicWorker({ log: deps.log, everyMs, what: 'spark points settled at banners’ end', pass: () => settlePass(deps) });
}

/** One pass: the players' points settled, in all. */
export async function settlePass(deps: ChestsDeps, now = new Date()): Promise<number> {
  let settled = 0;
  for (const { appId, banner: slug } of await endedSparkBanners(deps.pool)) {
    const banner = await findBanner(deps, appId, slug);
    if (!banner || banner.endsAt > now) continue;
    for (;;) {
      const n = await settleBatch(deps, appId, banner);
      settled += n;
      if (n < BATCH) break;
    }
  }
  return settled;
}

async function settleBatch(deps: ChestsDeps, appId: string, banner: Banner): Promise<number> {
  const currency = banner.content.spark?.currency;
  const ctx = { requestId: `spark-settlement-${randomUUID()}`, appId };
  let credits: OutboxMessage[] = [];
  const n = await withTransaction(deps.pool, async (tx) => {
    const rows = await settleSparkPoints(tx, appId, banner.id, BATCH);
    if (currency) {
      credits = rows.map((r) =>
        outboxMessage(
          WalletCreditGrant,
          randomUUID(),
          { appId, playerId: r.playerId, reason: 'spark_conversion', credits: [{ currency, amount: String(r.points) }] },
          { ...ctx, playerId: r.playerId },
        ),
      );
      await insertOutboxMessages(tx, credits);
    }
    return rows.length;
  });
  // Out now rather than at the relay's next pass (it publishes them if this fails).
  if (credits.length) void deps.relay.publishNow(credits).catch(() => undefined);
  return n;
}

import { randomUUID } from 'node:crypto';
import {
  insertOutboxMessages,
  outboxMessage,
  periodicWorker,
  WalletCreditGrant,
  withTransaction,
  type OutboxMessage,
  type Worker,
} from '@ccs/shared';
import { currentBanners, type Banner } from '../banners/banners.js';
import type { ChestsDeps } from '../deps.js';
import { groupsWithSparkPoints, settleSparkPoints } from '../repositories/banners-repo.js';

/** Players' points settled per transaction. */
const BATCH = 500;

/**
 * Spark points left when a pity group's banners are over (docs/design.md §8): points carry across the
 * banners of a group, so they settle once its last banner has ended and no banner of the group is
 * running or coming. Each pass finds the groups where players hold points and settles those whose
 * banners in the app's current content have all ended, a batch of players per transaction: the
 * points set to 0 (added to `settled_points`) and, when the group's last banner (the latest
 * `ends_at`) names a `spark.currency`, one wallet credit per player (reason `spark_conversion`,
 * one unit of the currency per point) written to the outbox in the same transaction, so a point
 * converts exactly once whatever crashes (the credit's message id is its outbox row's, which
 * wallet applies once). Without a currency they lapse. Replicas may all run it: a row is settled by
 * one transaction only (SKIP LOCKED, then `spark_points > 0`). A group none of whose banners is in
 * the current content any more is left as it is.
 */
export function sparkSettlement(deps: ChestsDeps, everyMs = deps.config.SPARK_SETTLE_INTERVAL_MS): Worker {
  return periodicWorker({ log: deps.log, everyMs, what: 'spark points settled after their banners ended', pass: () => settlePass(deps) });
}

/** One pass: the players' points settled, in all. */
async function settlePass(deps: ChestsDeps, now = new Date()): Promise<number> {
  let settled = 0;
  const banners = new Map<string, Banner[]>();
  for (const { appId, group } of await groupsWithSparkPoints(deps.pool)) {
    if (!banners.has(appId)) banners.set(appId, await currentBanners(deps, appId));
    const ofGroup = banners.get(appId)!.filter((b) => b.group === group);
    if (ofGroup.length === 0 || ofGroup.some((b) => b.endsAt > now)) continue;
    const last = ofGroup.reduce((a, b) => (b.endsAt > a.endsAt ? b : a));
    for (;;) {
      const n = await settleBatch(deps, appId, group, last.content.spark?.currency);
      settled += n;
      if (n < BATCH) break;
    }
  }
  return settled;
}

async function settleBatch(deps: ChestsDeps, appId: string, group: string, currency: string | undefined): Promise<number> {
  const ctx = { requestId: `spark-settlement-${randomUUID()}`, appId };
  let credits: OutboxMessage[] = [];
  const n = await withTransaction(deps.pool, async (tx) => {
    const rows = await settleSparkPoints(tx, appId, group, BATCH);
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

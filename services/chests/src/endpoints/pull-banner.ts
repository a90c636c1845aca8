import { appOf, callerOf, endpoint, PullBanner } from '@ccs/shared';
import { findBanner, isActive } from '../banners/banners.js';
import { bannerErrors } from '../errors.js';
import type { ChestsDeps } from '../deps.js';
import { openAndGrant } from '../opening/open-and-grant.js';
import { runPurchase } from '../payments/purchase-saga.js';
import { readBannerStanding } from '../repositories/banners-repo.js';

/**
 * chests.v1.pull_banner (docs/design.md §8): a pull of 1 or 10 is the banner's chest type bought, one
 * per pull, through the purchase saga (its compliance gates, spend limits, capacity and
 * Idempotency-Key, the key kept apart from plain purchases' as `pull:<banner>:<key>`), its chests
 * tagged with the banner, then opened as ONE batch (the opening pipeline, its key the purchase id)
 * rolled as the banner's pull: the 50/50, the guarantee and pity of the player's group, the
 * ten-pull floor, meta.banner on each opening and the standing in the same transaction.
 *
 * Nothing is lost between the two steps: a pull interrupted after its payment leaves the chests in
 * the player's inventory, tagged, and they open as banner pulls whenever opened (the same request
 * with its Idempotency-Key opens them, as one batch again, and answers the pull).
 */
export function pullBannerEndpoint(deps: ChestsDeps) {
  return endpoint(PullBanner, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const banner = await findBanner(deps, appId, req.bannerId);
    if (!banner) throw bannerErrors.bannerNotFound();
    const now = new Date();
    if (!isActive(banner, now)) throw bannerErrors.bannerNotActive(banner, now);
    const purchase = await runPurchase(
      deps,
      {
        appId,
        playerId,
        chestTypeId: banner.chestTypeId,
        currency: req.currency,
        quantity: req.count,
        banner: banner.id,
        ...(req.idempotencyKey ? { idempotencyKey: `pull:${banner.id}:${req.idempotencyKey}` } : {}),
      },
      ctx,
    );
    const { openings, granted } = await openAndGrant(
      deps,
      { appId, playerId, chestIds: purchase.chests.map((c) => c.id), kind: 'batch', idempotencyKey: `pull:${purchase.purchaseId}` },
      ctx,
    );
    const standing = await readBannerStanding(deps.pool, appId, playerId, banner.group);
    return {
      purchaseId: purchase.purchaseId,
      amount: purchase.amount,
      balance: purchase.balance,
      openings,
      granted,
      replayed: purchase.replayed,
      standing,
    };
  });
}

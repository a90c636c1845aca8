import { BannerIdSchema } from '@ccs/shared';
import type { OperationDoc } from '../route-doc.js';
import { BannerPullResult, SparkExchangeDocument } from '../../resources/banner-pulls.js';
import { idempotencyKeyHeader, IN_DEBT_403, INSUFFICIENT_FUNDS, INVALID_IDEMPOTENCY_KEY, NO_STORE_HEADER, REPLAYED_HEADER } from './common.js';

/** Documentation of a banner's pull and spark (docs/design.md §8, docs/content.md "Banners"). */

const bannerId = { id: { schema: BannerIdSchema, description: "A banner's id (its content slug).", example: 'kraken-rising' } };
const unknownBanner = 'no such banner in this app (`banner_not_found`)';

/** POST /api/v1/banners/{id}/pull. */
export const pullBanner: OperationDoc = {
  operationId: 'pullBanner',
  tag: 'Banners',
  summary: 'Pull a banner (1 or 10)',
  description:
    "Buys `count` (1 or 10) chests of the banner's chest type at its price in `currency`, one per pull, and opens them at once as one batch: each opening rolls the chest's rules with the banner's featured rate-up (`featured.share` of the items of the featured rarity are featured, or all of them while the guarantee holds), the pity of the banner's pity group, and for a ten-pull the `ten_pull_floor`. " +
    "Every gate and limit of a purchase applies (region, age, spend limits, capacity, balance). All or nothing: a pull either is paid and opened, or the payment is refunded; a pull interrupted after its payment leaves its chests in the inventory, and they open as this banner's pulls (the same request with its Idempotency-Key opens them and answers). " +
    'Each opening records `meta.banner` and is verifiable as any opening (docs/fairness.md, "Banner pulls"). Never cached.',
  token: 'required',
  params: bannerId,
  headers: idempotencyKeyHeader('the first pull'),
  bodyExample: { data: { type: 'pull', attributes: { count: 10, currency: 'gems' } } },
  responses: [
    {
      status: 200,
      description: 'Pulled: one chest-opening result per pull, in order.',
      schema: BannerPullResult,
      headers: { ...NO_STORE_HEADER, ...REPLAYED_HEADER },
    },
  ],
  errors: {
    400: [INVALID_IDEMPOTENCY_KEY],
    403: [
      "a paid currency, and the player's region or age is refused (`blocked_in_region`, `age_restricted`), or the amount would pass a spend limit (`spend_limit_reached`), as for a purchase",
      `${IN_DEBT_403}, and nothing is pulled`,
    ],
    404: [unknownBanner],
    409: [
      "outside the banner's window (`banner_not_active`, `meta.starts_at`, `meta.ends_at`)",
      'the inventory would exceed its capacity (`inventory_full`)',
      `the balance is too low for the pulls (\`insufficient_funds\`: ${INSUFFICIENT_FUNDS})`,
      'the Idempotency-Key was used for another pull (`idempotency_key_reused`) or a pull with it is under way (`idempotency_key_in_use`)',
    ],
    422: ["the banner's chest cannot be bought with that currency (`price_unavailable`)"],
    503: [
      "the app's content is not loaded yet (`content_unavailable`)",
      'the purchase was interrupted; anything taken is refunded (`purchase_interrupted`)',
    ],
  },
};

/** POST /api/v1/banners/{id}/spark. */
export const sparkBanner: OperationDoc = {
  operationId: 'sparkBanner',
  tag: 'Banners',
  summary: 'Exchange spark points for a featured collectible',
  description:
    "Takes `spark.cost` of the caller's spark points on the banner (one per pull) and grants one of its featured collectibles, of the caller's choice, to their collection. " +
    'Exactly once: racing exchanges cannot spend the same points twice, and the Idempotency-Key answers the first exchange again. Until the banner ends (then its points convert to `spark.currency`, or lapse). Never cached.',
  token: 'required',
  params: bannerId,
  headers: idempotencyKeyHeader('the first exchange'),
  bodyExample: { data: { type: 'spark', attributes: { collectible_id: 'sea-kraken' } } },
  responses: [
    {
      status: 201,
      description: 'Exchanged: the collectible is granted.',
      schema: SparkExchangeDocument,
      headers: { ...NO_STORE_HEADER, ...REPLAYED_HEADER },
    },
  ],
  errors: {
    400: [INVALID_IDEMPOTENCY_KEY],
    404: [unknownBanner],
    409: [
      'too few spark points (`spark_points_insufficient`, `meta.spark_points`, `meta.cost`)',
      'the banner has no spark (`spark_unavailable`)',
      "outside the banner's window (`banner_not_active`)",
      'the Idempotency-Key was used for another exchange (`idempotency_key_reused`)',
    ],
    422: ["the collectible is not one of the banner's featured ones (`not_featured`)"],
  },
};

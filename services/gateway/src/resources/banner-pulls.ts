import { z } from 'zod';
import { DecimalSchema, UuidSchema, type ReplyOf, PullBanner, SparkBanner } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { BatchOpening, batchOpenings } from './openings.js';
import { Count, NoRelationships, Timestamp } from './jsonapi.js';

/**
 * Response schemas of a banner's pull and spark (docs/design.md §8), with the functions that render
 * them, typed by those schemas.
 */

/** The caller's standing on a banner. */
export const BannerStanding = z
  .object({
    pulls: Count.describe("Pulls (openings) made on the banners of the banner's pity group."),
    spark_points: Count.describe(
      "Spark points in the banner's pity group: one per pull on any of its banners, `spark.cost` of them taken by an exchange; converted or lapsed once the group's last banner has ended.",
    ),
    guaranteed_featured: z
      .boolean()
      .describe("Whether the next item of the featured rarity from the banner's pity group is featured for certain (after an off-banner one)."),
    pity: Count.describe("The pity group's counter: openings since the last one that gave the chest's pity rarity or better."),
  })
  .describe(
    "The caller's standing in the banner's pity group (carried across its banners): pulls, spark points, the guarantee flag and the pity counter.",
  );

/** A pull's answer: a batch result, with the purchase and the standing after it. */
export const BannerPullResult = component(
  'BannerPullResult',
  "A banner pull's openings (as a batch open's result: one chest-opening result per pull, each with `meta.banner`), what was paid, and the caller's standing after the pull.",
  z.object({
    data: z.array(BatchOpening),
    meta: z.object({
      banner_id: z.string(),
      pulls: Count.describe('1 or 10.'),
      experience_gained: Count,
      purchase_id: UuidSchema.describe('The purchase that paid for the pull.'),
      price_paid: z.record(z.string(), z.number()).describe('Amount paid, by currency code.'),
      balance: z.record(z.string(), DecimalSchema).describe('Balance left, by currency code, as a decimal string.'),
      player: BannerStanding,
      message: z.string().describe('Human-readable summary.'),
    }),
  }),
);

/** A spark exchange. */
export const SparkExchangeDocument = component(
  'SparkExchangeDocument',
  'A spark exchange: `cost` spark points of the banner taken for one of its featured collectibles, granted to the collection.',
  z.object({
    data: z.object({
      type: z.literal('spark_exchange'),
      id: UuidSchema,
      attributes: z.object({
        banner_id: z.string(),
        collectible_id: z.string().describe('The featured collectible chosen, now in the collection (or shortly: see `meta.granted`).'),
        cost: Count.describe('Spark points taken.'),
        created_at: Timestamp,
      }),
      relationships: NoRelationships,
    }),
    meta: z.object({
      spark_points_after: Count.describe('Spark points left on the banner.'),
      granted: z.boolean().describe('Whether collections confirmed the grant before the answer (else it lands shortly).'),
    }),
  }),
);

/** What `BannerPullResult` describes, as the gateway renders it. */
export type BannerPullResult = z.output<typeof BannerPullResult>;
/** What `SparkExchangeDocument` describes, as the gateway renders it. */
export type SparkExchangeDocument = z.output<typeof SparkExchangeDocument>;

/** A banner pull's answer: its openings as a batch result, what was paid and the caller's standing after it. */
export function bannerPullResult(r: ReplyOf<typeof PullBanner>, bannerId: string, currency: string): z.output<typeof BannerPullResult> {
  const featured = r.openings.filter((o) => o.banner?.featured).length;
  const items = r.openings.reduce((n, o) => n + o.items.length, 0);
  return {
    data: batchOpenings(r.openings),
    meta: {
      banner_id: bannerId,
      pulls: r.openings.length,
      experience_gained: r.openings.reduce((n, o) => n + o.experience, 0),
      purchase_id: r.purchaseId,
      price_paid: { [currency]: Number(r.amount) },
      balance: { [currency]: r.balance },
      player: {
        pulls: r.standing.pulls,
        spark_points: r.standing.sparkPoints,
        guaranteed_featured: r.standing.guaranteedFeatured,
        pity: r.standing.pity,
      },
      message: `${r.openings.length} pull${r.openings.length === 1 ? '' : 's'}: ${items} collectibles (${featured} featured) ${r.granted ? 'added to your collection' : 'on their way to your collection'}.`,
    },
  };
}

/** A spark exchange: what it took and granted. */
export function sparkExchangeDocument(r: ReplyOf<typeof SparkBanner>): z.output<typeof SparkExchangeDocument> {
  return {
    data: {
      type: 'spark_exchange',
      id: r.exchangeId,
      attributes: { banner_id: r.bannerId, collectible_id: r.collectibleId, cost: r.cost, created_at: r.createdAt },
      relationships: {},
    },
    meta: { spark_points_after: r.sparkPointsAfter, granted: r.granted },
  };
}

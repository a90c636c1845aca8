import { z } from 'zod';
import { OpeningViewSchema } from './chests.js';
import { DecimalSchema, UuidSchema } from './context.js';
import { defineSubject } from './subject.js';
import { CurrencyCodeSchema } from './wallet.js';

/** A banner's API id: its content slug; anything else names no banner (the gateway answers 404 for it). */
export const BannerIdSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/);

/** A player's standing on a banner after a pull or an exchange (docs/design.md §8, `meta.player`). */
export const BannerStandingViewSchema = z.object({
  pulls: z.number().int().min(0),
  sparkPoints: z.number().int().min(0),
  guaranteedFeatured: z.boolean(),
  pity: z.number().int().min(0),
});

/**
 * A pull of 1 or 10 on a banner (docs/design.md §8): the banner's chest type bought at its price (one
 * per pull; all of the purchase's gates, limits and the Idempotency-Key), then opened as one batch
 * with the 50/50, the guarantee, the group's pity and the ten-pull floor. 404 banner_not_found,
 * 409 banner_not_active outside its window.
 */
export const PullBanner = defineSubject(
  'chests.v1.pull_banner',
  z.object({
    bannerId: BannerIdSchema,
    count: z.union([z.literal(1), z.literal(10)]),
    currency: CurrencyCodeSchema,
    idempotencyKey: z.string().min(1).max(255).optional(),
  }),
  z.object({
    purchaseId: UuidSchema,
    amount: DecimalSchema,
    /** The balance of the currency after the debit. */
    balance: DecimalSchema,
    openings: z.array(OpeningViewSchema),
    /** Whether collections confirmed every grant before the answer (else they land shortly). */
    granted: z.boolean(),
    replayed: z.boolean(),
    standing: BannerStandingViewSchema,
  }),
  { callers: ['gateway'] },
);

/**
 * The spark (docs/design.md §8): `spark.cost` of the player's points in the banner's pity group for one featured
 * collectible of their choice, granted through the grant stream exactly once. 409
 * spark_points_insufficient, 422 not_featured; the Idempotency-Key answers the first exchange again.
 */
export const SparkBanner = defineSubject(
  'chests.v1.spark_banner',
  z.object({
    bannerId: BannerIdSchema,
    collectibleId: z.string().min(1).max(64),
    idempotencyKey: z.string().min(1).max(255).optional(),
  }),
  z.object({
    exchangeId: UuidSchema,
    bannerId: z.string(),
    collectibleId: z.string(),
    cost: z.number().int().positive(),
    createdAt: z.string(),
    sparkPointsAfter: z.number().int().min(0),
    granted: z.boolean(),
    replayed: z.boolean(),
  }),
  { callers: ['gateway'] },
);

import { AppError } from '@ccs/shared';
import type { Banner } from './banners.js';

/** The banners' domain errors (DESIGN.md §8). */
export const bannerErrors = {
  bannerNotFound: () => AppError.notFound('banner_not_found', 'No banner with this id.', { parameter: 'id' }),
  bannerNotActive: (b: Banner, now: Date) =>
    new AppError({
      kind: 'conflict',
      code: 'banner_not_active',
      detail:
        now < b.startsAt
          ? `This banner opens at ${b.content.starts_at}; pull it from then.`
          : `This banner ended at ${b.content.ends_at}; pull an active banner instead (GET /api/v1/banners).`,
      meta: { starts_at: b.content.starts_at, ends_at: b.content.ends_at },
    }),
  noSpark: () => AppError.conflict('spark_unavailable', 'This banner has no spark: nothing can be exchanged for its pulls.'),
  notFeatured: (b: Banner) =>
    new AppError({
      kind: 'invalid',
      code: 'not_featured',
      detail: `A spark takes one of the banner's featured collectibles: ${b.content.featured.collectibles.join(', ')}.`,
      source: { pointer: '/data/attributes/collectible_id' },
    }),
  sparkPointsInsufficient: (have: number, cost: number) =>
    new AppError({
      kind: 'conflict',
      code: 'spark_points_insufficient',
      detail: `A spark costs ${cost} points on this banner; you have ${have} in its pity group. Each pull on the group's banners adds one.`,
      meta: { spark_points: have, cost },
    }),
  sparkKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used for another spark; use a new key.', {
      header: 'Idempotency-Key',
    }),
};

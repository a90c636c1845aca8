import { z } from 'zod';
import { BannerDocument, BannerListDocument, BannerOddsDocument } from '../../resources/banners.js';
import type { OperationDoc, ParamDoc } from '../route-doc.js';

/** Documentation of gacha banners' reads (docs/design.md §8): the list, one banner, a banner's odds. */

const bannerId: Record<string, ParamDoc> = {
  id: { schema: z.string().min(1), description: 'The banner (its content slug, not a UUID).', example: 'kraken-rising' },
};
const unknownBanner = 'no such banner in the current content of this app, or an id that is not a slug (`banner_not_found`)';
const PRIVATE = {
  'cache-control': {
    description: "`private, no-store` with a Bearer token (the answer carries the caller's standing in `meta.player`); absent otherwise.",
    schema: z.string(),
  },
};
const STANDING =
  " With a Bearer token, each banner's `meta.player` is the caller's standing: `pulls` and `spark_points` on the banner, and the pity group's `guaranteed_featured` flag and `pity` counter.";

/** GET /api/v1/banners. */
export const listBanners: OperationDoc = {
  operationId: 'listBanners',
  tag: 'Banners',
  summary: "The app's active and coming gacha banners",
  description:
    'Banners of the current content whose window has not ended (`active` says whether one takes pulls now), in content order. A banner pulls its chest type (`relationships.chest_type`, a catalog chest) with a featured rate-up, a guarantee, a spark and a ten-pull floor (docs/design.md §8).' +
    STANDING,
  token: 'optional',
  responses: [{ status: 200, description: 'The banners.', schema: BannerListDocument, headers: PRIVATE }],
};

/** GET /api/v1/banners/{id}. */
export const getBanner: OperationDoc = {
  operationId: 'getBanner',
  tag: 'Banners',
  summary: 'One gacha banner',
  description: 'One banner of the current content, an ended one too.' + STANDING,
  token: 'optional',
  params: bannerId,
  responses: [{ status: 200, description: 'The banner.', schema: BannerDocument, headers: PRIVATE }],
  errors: { 404: [unknownBanner] },
};

/** GET /api/v1/banners/{id}/odds. */
export const getBannerOdds: OperationDoc = {
  operationId: 'getBannerOdds',
  tag: 'Banners',
  summary: 'The odds of a gacha banner',
  description:
    'The banner odds document (docs/fairness.md, "Banner pulls"): the featured share, the guarantee, the spark and the ten-pull floor, with its chest type\'s rules and rule inputs at the rules version its pulls roll, so that `scripts/verify-opening.mjs --banner` recomputes a banner opening from it alone. ' +
    'It also gives the long-run share of featured collectibles among items of the featured rarity, and the exact expected pulls to a featured collectible from a fresh standing, with and without the guarantee. ' +
    "With a Bearer token, `meta.player` is the caller's standing and the expected pulls from it (never cached).",
  token: 'optional',
  params: bannerId,
  responses: [{ status: 200, description: 'The banner odds document.', schema: BannerOddsDocument, headers: PRIVATE }],
  errors: { 404: [unknownBanner] },
};

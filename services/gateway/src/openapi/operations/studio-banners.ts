import { z } from 'zod';
import { BannerStatsDocument } from '../schemas/studio-banners.js';
import type { OperationDoc } from '../route-doc.js';
import { NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of a gacha banner's stats in the admin API (DESIGN.md §8; docs/operations.md, "Admin API"). */

/** GET /api/v1/admin/banners/{id}/stats. */
export const adminBannerStats: OperationDoc = {
  operationId: 'adminBannerStats',
  tag: 'Admin',
  summary: "A banner's real pulls against its disclosed figures and a simulation",
  description:
    "Side by side, for a banner of the current content (an ended one too): `real`, what the app's kept banner openings of it recorded (OPENINGS_RETENTION_DAYS): pulls, players, items of the featured rarity and the featured ones among them, with the observed featured share and its 95 % interval, guarantees used (openings that began with the guarantee flag set and gave a featured collectible), ten-pull floor re-rolls, spark exchanges, points settled at its end and points held; " +
    '`disclosed`, what its odds document says: `featured.share`, the long-run share 1 / (2 − share) with the guarantee, and the exact expected pulls to a featured collectible with and without the guarantee; ' +
    "`simulation`, the same quantities measured by the banner simulator (the production pull) on the chest's current rules: 5 players × 1,000 single pulls and 200 players chasing the first featured collectible, seeded by the banner's id so every call answers the same. " +
    'Players with short histories read below the long-run share: their first item of the rarity is a plain 50/50. Recorded in the audit log. Never cached.',
  token: 'none',
  params: {
    id: { schema: z.string().min(1).max(200), description: 'The banner (its content slug).', example: 'kraken-rising' },
  },
  responses: [{ status: 200, description: "The banner's stats.", schema: BannerStatsDocument, headers: NO_STORE_HEADER }],
  errors: {
    ...SECRET_KEY_ONLY,
    404: ['no such banner in the current content of this app, or an id that is not a slug (`banner_not_found`)'],
  },
};

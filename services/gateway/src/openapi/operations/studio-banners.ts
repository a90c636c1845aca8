import { z } from 'zod';
import { BannerStatsDocument } from '../../resources/studio-banners.js';
import type { OperationDoc } from '../route-doc.js';
import { NO_STORE_HEADER } from './common.js';
import { SECRET_KEY_ONLY } from './studio.js';

/** Documentation of a gacha banner's stats in the admin API (docs/design.md §8; docs/operations.md, "Admin API"). */

/** GET /api/v1/admin/banners/{id}/stats. */
export const adminBannerStats: OperationDoc = {
  operationId: 'adminBannerStats',
  tag: 'Admin',
  summary: "A banner's real pulls against its disclosed figures and a simulation",
  description:
    "Side by side, for a banner of the current content (an ended one too): `real`, what the app's kept banner openings of it recorded (OPENINGS_RETENTION_DAYS): pulls, players, items of the featured rarity and the featured ones among them, with the observed featured share and its 95 % interval, guarantees used (openings that began with the guarantee flag set and gave a featured collectible), ten-pull floor re-rolls, spark exchanges, points settled at its end and points held; " +
    '`disclosed`, what its odds document says: `featured.share`, the long-run share 1 / (2 − share) with the guarantee, and the exact expected pulls to a featured collectible with and without the guarantee; ' +
    "`simulation`, the same quantities measured by the banner simulator (the production pull) on the chest's current rules: 5 players × 1,000 single pulls and 200 players chasing the first featured collectible, seeded by the banner's id so every call answers the same. " +
    'Players with short histories read below the long-run share: their first item of the rarity is a plain 50/50. A read: not recorded in the audit log. Never cached.\n\n' +
    "The simulation runs once per app, banner and rules version (later calls reuse it), under the odds simulator's bounds: in a worker thread of chests, one simulation per app at a time across every chests replica, running or waiting for its turn (another meanwhile, an odds simulation too, is answered 429 `simulation_busy`), at most `SIMULATION_MAX_CONCURRENT` at once per chests process, the others waiting up to `SIMULATION_QUEUE_WAIT_MS`.",
  token: 'none',
  params: {
    id: { schema: z.string().min(1).max(200), description: 'The banner (its content slug).', example: 'kraken-rising' },
  },
  responses: [{ status: 200, description: "The banner's stats.", schema: BannerStatsDocument, headers: NO_STORE_HEADER }],
  errors: {
    ...SECRET_KEY_ONLY,
    404: ['no such banner in the current content of this app, or an id that is not a slug (`banner_not_found`)'],
    429: [
      'its simulation has to run, and a simulation of this app (an odds simulation, or another banner stats) is already running or waiting for its turn, on this or another chests replica (`simulation_busy`): nothing done; retry after `Retry-After` seconds (also in `meta.retry_after_seconds`)',
    ],
    503: [
      'its simulation has to run, and the chests replica already runs `SIMULATION_MAX_CONCURRENT` simulations and none ended within `SIMULATION_QUEUE_WAIT_MS`, or `SIMULATION_MAX_QUEUED` wait already (`overloaded`, with `Retry-After`)',
      'the simulation took longer than `SIMULATION_TIMEOUT_MS` and was stopped (`simulation_timeout`)',
      'Postgres, which holds the per-app lock, or the chests service is not reachable (`service_unavailable`)',
    ],
  },
};
